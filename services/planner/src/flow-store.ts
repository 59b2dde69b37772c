import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { BUCKETS, DuraError } from '@dura/contracts';
import {
  decodeLimitRecord,
  emptyLimitRecord,
  encodeLimitRecord,
  LruCache,
  type LimitName,
  type LimitRecord,
} from '@dura/core';
import { createKvEntry, getKvEntry, openKvBucket, openOnce } from '@dura/event-store';
import type { Logger } from '@dura/service-kit';

/** Shared flow-control state of every planner replica: limit records, and tickets handed out ahead of time. */
export const FLOW_BUCKET = BUCKETS.flow;

const MAX_CAS_ATTEMPTS = 50;
/** Records kept decoded, at most (and at most this many bytes of them as stored). */
const KNOWN_RECORDS = 256;
const KNOWN_BYTES = 8 * 1024 * 1024;
const TTL_MS = 24 * 60 * 60_000;

/** A call's place under a rate limit: the moment it may go, and the limit that set it. */
export interface Ticket {
  at: number;
  limit: LimitName;
}

export interface FlowStore {
  /** Applies `change` to the record of `key` with compare-and-set, re-reading on a lost race; returns what it gave. */
  update<T>(key: string, change: (record: LimitRecord) => { record: LimitRecord; result: T }): Promise<T>;
  /** The ticket `holder` holds under `key`, if any, with the revision that `useTicket` consumes. */
  ticket(key: string, holder: string): Promise<(Ticket & { revision: number }) | undefined>;
  putTicket(key: string, holder: string, ticket: Ticket): Promise<void>;
  /** Consumes a ticket read at `revision`: false when another drive of the same call consumed it first. */
  useTicket(key: string, holder: string, revision: number): Promise<boolean>;
}

/** A KV key for any text: base64url keeps it within the characters KV keys allow. */
export function encoded(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** Opens (creating when missing) the `dura_flow` bucket. */
export function openFlowBucket(js: JetStreamClient, replicas = 1): Promise<KV> {
  return openKvBucket(js, FLOW_BUCKET, {
    replicas,
    // Tickets of runs that never came back (cancelled, failed) go by themselves; a limit untouched this long
    // is full again anyway; planners write their declarations again well within it.
    ttl: TTL_MS,
    description: 'Dura model limits and concurrency keys shared by every planner (compare-and-set)',
  });
}

/**
 * The NATS KV bucket `dura_flow`: one entry per limit (`l.<key>`, in the compact form of `encodeLimitRecord`,
 * which also reads records written before it), one per declaration a planner holds
 * (`d.<key>.<digest>`, see `flow-declarations.ts`), written only with compare-and-set on its
 * revision, so replicas admitting at once never both take the last unit; one entry per ticket
 * (`t.<key>.<holder>`), which only its holder's run reads and deletes, so tickets never contend.
 */
export function createFlowStore(deps: {
  js: JetStreamClient;
  log: Logger;
  replicas?: number;
  clock?: () => number;
}): FlowStore {
  const clock = deps.clock ?? Date.now;
  const open = openOnce(() => openFlowBucket(deps.js, deps.replicas));

  const ticketKey = (key: string, holder: string) => `t.${encoded(key)}.${encoded(holder)}`;
  // One compare-and-set per key at a time in this process: replicas contend, a replica's own calls queue.
  const queues = new Map<string, Promise<unknown>>();

  function serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = queues.get(key) ?? Promise.resolve();
    const mine = previous.catch(() => undefined).then(fn);
    queues.set(key, mine);
    void mine
      .catch(() => undefined)
      .finally(() => {
        if (queues.get(key) === mine) queues.delete(key);
      });
    return mine;
  }

  // The record of each key as this replica last read or wrote it, by revision (a revision is one stream
  // message, and records are never changed in place): read again unchanged, it is not decoded again.
  const known = new LruCache<string, { revision: number; record: LimitRecord }>(KNOWN_RECORDS, KNOWN_BYTES);

  async function casUpdate<T>(
    key: string,
    change: (record: LimitRecord) => { record: LimitRecord; result: T },
  ): Promise<T> {
    const kv = await open();
    const name = `l.${encoded(key)}`;
    for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
      const entry = await getKvEntry(kv, name);
      const live = entry?.operation === 'PUT' && entry.length > 0;
      const cached = live ? known.get(name) : undefined;
      let current: LimitRecord;
      if (!live) current = emptyLimitRecord(clock());
      else if (cached?.revision === entry.revision) current = cached.record;
      else {
        current = decodeLimitRecord(entry.json<unknown>());
        known.set(name, { revision: entry.revision, record: current }, entry.length);
      }
      const { record, result } = change(current);
      try {
        if (record === current) return result;
        const text = encodeLimitRecord(record);
        const revision =
          entry === null ? await createKvEntry(kv, name, text) : await kv.update(name, text, entry.revision);
        known.set(name, { revision, record }, text.length);
        return result;
      } catch (err) {
        deps.log.debug('limit changed meanwhile; reading again', { key, err: (err as Error).message });
        // Another replica wrote first: a short random pause keeps the replicas from colliding again.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));
      }
    }
    throw new DuraError(
      'flow_contended',
      `limit ${key} changed on each of ${MAX_CAS_ATTEMPTS} tries (many replicas admitting at once); the call is retried`,
      { retryable: true },
    );
  }

  return {
    update: (key, change) => serialized(key, () => casUpdate(key, change)),
    async ticket(key, holder) {
      const entry = await (await open()).get(ticketKey(key, holder));
      if (entry?.operation !== 'PUT' || entry.length === 0) return undefined;
      return { ...entry.json<Ticket>(), revision: entry.revision };
    },
    async putTicket(key, holder, ticket) {
      await (await open()).put(ticketKey(key, holder), JSON.stringify(ticket));
    },
    async useTicket(key, holder, revision) {
      try {
        await (await open()).delete(ticketKey(key, holder), { previousSeq: revision });
        return true;
      } catch {
        return false;
      }
    },
  };
}
