import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import {
  BUCKETS,
  DuraError,
  formatIssues,
  ScheduleRecordSchema,
  ScheduleSpecSchema,
  type ScheduleRecord,
  type ScheduleSpec,
  type ScheduleSpecInput,
} from '@dura/contracts';
import { canonicalJson, checkSchedule, withHistory } from '@dura/core';
import { bucketKeyLister } from './bucket-keys';
import { whileBucketSettles } from './bucket-settle';
import { createKvEntry, openKvBucket, openOnce, readKvRecord } from './kv-bucket';

/** A stored schedule and the KV revision it was read at (the compare-and-set guard of its next write). */
export interface StoredSchedule {
  record: ScheduleRecord;
  revision: number;
}

export class ScheduleError extends DuraError {
  constructor(
    code: 'schedule_not_found' | 'schedule_exists' | 'invalid_schedule' | 'schedule_contended',
    message: string,
  ) {
    super(code, message, { retryable: code === 'schedule_contended' });
  }
}

const MAX_CAS_ATTEMPTS = 20;

/** Opens (creating when missing) the `dura_schedules` bucket: one key per schedule, history 1. */
export function openScheduleBucket(js: JetStreamClient, replicas = 1): Promise<KV> {
  return openKvBucket(js, BUCKETS.schedules, {
    replicas,
    description: 'Dura schedules: scheduleId -> spec, pause, handled ticks and recent runs',
  });
}

/** Validates a schedule spec (schema, cron, time zone); throws `ScheduleError` saying what is wrong. */
export function parseScheduleSpec(input: unknown): ScheduleSpec {
  const parsed = ScheduleSpecSchema.safeParse(input);
  if (!parsed.success)
    throw new ScheduleError(
      'invalid_schedule',
      `the schedule is invalid: ${formatIssues(parsed.error).join('; ')}`,
    );
  try {
    checkSchedule(parsed.data);
  } catch (err) {
    throw new ScheduleError('invalid_schedule', (err as Error).message);
  }
  return parsed.data;
}

/**
 * Schedules in their KV bucket. Every change is a compare-and-set on the revision read, so replicas and
 * clients changing one schedule at once never lose each other's writes.
 */
export function createScheduleStore(deps: { js: JetStreamClient; replicas?: number }) {
  const open = openOnce(() => openScheduleBucket(deps.js, deps.replicas));

  const listKeys = bucketKeyLister(deps.js, BUCKETS.schedules);

  async function read(id: string): Promise<StoredSchedule | undefined> {
    return readKvRecord(await open(), id, ScheduleRecordSchema);
  }

  /** Sorted; a schedule deleted may still be listed until its delete marker is gone (read it to know). */
  async function ids(): Promise<string[]> {
    await open();
    return listKeys();
  }

  async function mustRead(id: string): Promise<StoredSchedule> {
    const stored = await read(id);
    if (!stored)
      throw new ScheduleError(
        'schedule_not_found',
        `no schedule "${id}": check the id with "dura schedule ls"`,
      );
    return stored;
  }

  /** Writes `record` if the key is still at `revision`: its new revision, or undefined when someone wrote first. */
  async function compareAndSet(
    id: string,
    record: ScheduleRecord,
    revision: number,
  ): Promise<number | undefined> {
    try {
      const kv = await open();
      return await whileBucketSettles(() => kv.update(id, JSON.stringify(record), revision));
    } catch {
      return undefined;
    }
  }

  /** Applies `change` to the current record until its write wins (re-reading after each lost race). */
  async function change(
    id: string,
    apply: (record: ScheduleRecord) => ScheduleRecord,
  ): Promise<ScheduleRecord> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt += 1) {
      const { record, revision } = await mustRead(id);
      const next = apply(record);
      if ((await compareAndSet(id, next, revision)) !== undefined) return next;
    }
    throw new ScheduleError(
      'schedule_contended',
      `schedule "${id}" changed on each of ${MAX_CAS_ATTEMPTS} tries; retry`,
    );
  }

  return {
    read,
    compareAndSet,
    /**
     * Stores a new schedule; its first tick is the first after `now`. The same spec again is a no-op
     * (idempotent create); another spec under an existing id is refused.
     */
    async create(
      input: ScheduleSpecInput,
      now: number,
    ): Promise<{ record: ScheduleRecord; created: boolean }> {
      const spec = parseScheduleSpec(input);
      const record: ScheduleRecord = {
        spec,
        paused: false,
        createdAt: now,
        cursor: now,
        history: [],
        pending: { start: [], cancel: [] },
      };
      try {
        const kv = await open();
        await createKvEntry(kv, spec.id, JSON.stringify(record));
        return { record, created: true };
      } catch (err) {
        const existing = await read(spec.id);
        if (!existing) throw err;
        if (canonicalJson(existing.record.spec) === canonicalJson(spec))
          return { record: existing.record, created: false };
        throw new ScheduleError(
          'schedule_exists',
          `schedule "${spec.id}" exists with another definition: delete it first or choose another id`,
        );
      }
    },
    get: async (id: string): Promise<ScheduleRecord> => (await mustRead(id)).record,
    /** The ids of every schedule, sorted (one stream-info request); deleted ones may be among them. */
    ids,
    /** Every schedule, or a tenant's. */
    async list(tenant?: string): Promise<ScheduleRecord[]> {
      const records = await Promise.all((await ids()).map((id) => read(id)));
      return records
        .filter((s): s is StoredSchedule => s !== undefined)
        .map((s) => s.record)
        .filter((r) => tenant === undefined || r.spec.tenant === tenant);
    },
    /** Pausing stops its ticks; resuming starts again from `now` (ticks while paused never run). */
    setPaused: (id: string, paused: boolean, now: number): Promise<ScheduleRecord> =>
      change(id, (r) => (r.paused === paused ? r : { ...r, paused, ...(paused ? {} : { cursor: now }) })),
    /** Starts a run now, outside the timing; idempotent on `key` (default: the current second). */
    trigger: (id: string, now: number, key?: string): Promise<{ record: ScheduleRecord; runId: string }> => {
      const runId = `sch-${id}-m${key ?? Math.floor(now / 1000)}`;
      return change(id, (r) =>
        r.pending.start.some((p) => p.runId === runId) || r.history.some((h) => h.runId === runId)
          ? r
          : withHistory(
              {
                ...r,
                lastRunId: runId,
                // Unclaimed: the first replica to read it publishes it, without waiting for a holder.
                pending: { start: [...r.pending.start, { tick: now, runId }], cancel: r.pending.cancel },
              },
              [{ tick: now, runId, action: 'triggered' }],
            ),
      ).then((record) => ({ record, runId }));
    },
    /** True when it existed. Its runs are not touched. */
    async remove(id: string): Promise<boolean> {
      if (!(await read(id))) return false;
      await (await open()).delete(id);
      return true;
    },
  };
}

export type ScheduleStore = ReturnType<typeof createScheduleStore>;
