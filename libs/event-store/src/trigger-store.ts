import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import {
  BUCKETS,
  DuraError,
  EventTriggerRecordSchema,
  EventTriggerSpecSchema,
  formatIssues,
  gateKeyIssue,
  type EventTriggerRecord,
} from '@dura/contracts';
import { canonicalJson } from '@dura/core';
import { bucketKeyLister } from './bucket-keys';
import { createKvEntry, getKvMessage, openKvBucket, openOnce, readKvRecord } from './kv-bucket';

export class TriggerError extends DuraError {
  constructor(code: 'trigger_not_found' | 'trigger_exists' | 'invalid_trigger', message: string) {
    super(code, message);
  }
}

/** A trigger's record and the revision (bucket stream sequence) of the entry holding it. */
export interface TriggerEntry {
  record: EventTriggerRecord;
  revision: number;
}

/** Opens (creating when missing) the `dura_triggers` bucket: one key per event trigger. */
export function openTriggerBucket(js: JetStreamClient, replicas = 1): Promise<KV> {
  return openKvBucket(js, BUCKETS.triggers, {
    replicas,
    description: 'Dura event triggers: triggerId -> subject, tenant and the run to start per message',
  });
}

/** Event triggers in their KV bucket; planners read it and bind one durable consumer per trigger. */
export function createTriggerStore(deps: { js: JetStreamClient; replicas?: number }) {
  const open = openOnce(() => openTriggerBucket(deps.js, deps.replicas));
  const manager = openOnce(() => deps.js.jetstreamManager(false));

  const listKeys = bucketKeyLister(deps.js, BUCKETS.triggers);

  async function readEntry(id: string): Promise<TriggerEntry | undefined> {
    return readKvRecord(await open(), id, EventTriggerRecordSchema);
  }

  async function read(id: string): Promise<EventTriggerRecord | undefined> {
    return (await readEntry(id))?.record;
  }

  return {
    read,
    /** Every trigger now defined, with the revision of its entry (a trigger deleted and made again has another). */
    async entries(): Promise<TriggerEntry[]> {
      await open();
      const entries = await Promise.all((await listKeys()).map((id) => readEntry(id)));
      return entries.filter((e): e is TriggerEntry => e !== undefined);
    },
    /**
     * The trigger's entry as the bucket's stream leader has it (a message get, not a direct get a lagging
     * replica may answer): a delete that has returned is seen here. Undefined when deleted or never made.
     */
    async current(id: string): Promise<TriggerEntry | undefined> {
      const msg = await getKvMessage(await manager(), BUCKETS.triggers, id);
      if (!msg) return undefined;
      const parsed = EventTriggerRecordSchema.safeParse(msg.json());
      return parsed.success ? { record: parsed.data, revision: msg.seq } : undefined;
    },
    /** Stores a trigger; the same spec again is a no-op, another spec under its id is refused. */
    async create(input: unknown, now: number): Promise<{ record: EventTriggerRecord; created: boolean }> {
      const parsed = EventTriggerSpecSchema.safeParse(input);
      if (!parsed.success)
        throw new TriggerError(
          'invalid_trigger',
          `the event trigger is invalid: ${formatIssues(parsed.error).join('; ')}`,
        );
      const keys = gateKeyIssue(parsed.data);
      if (keys) throw new TriggerError('invalid_trigger', `the event trigger is invalid: ${keys}`);
      const record = { spec: parsed.data, createdAt: now };
      try {
        const kv = await open();
        await createKvEntry(kv, record.spec.id, JSON.stringify(record));
        return { record, created: true };
      } catch (err) {
        const existing = await read(record.spec.id);
        if (!existing) throw err;
        if (canonicalJson(existing.spec) === canonicalJson(record.spec))
          return { record: existing, created: false };
        throw new TriggerError(
          'trigger_exists',
          `event trigger "${record.spec.id}" exists with another definition: delete it first or choose another id`,
        );
      }
    },
    async list(): Promise<EventTriggerRecord[]> {
      await open();
      const records = await Promise.all((await listKeys()).map((id) => read(id)));
      return records.filter((r): r is EventTriggerRecord => r !== undefined);
    },
    async remove(id: string): Promise<boolean> {
      if (!(await read(id))) return false;
      await (await open()).delete(id);
      return true;
    },
  };
}

export type TriggerStore = ReturnType<typeof createTriggerStore>;
