import { createHash } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import { BUCKETS, DuraError, GateRecordSchema, type GateOutcome, type GateRecord } from '@dura/contracts';
import { arrive, runInFlight, type Arrival, type RunPhase } from '@dura/core';
import { bucketKeyLister } from './bucket-keys';
import { whileBucketSettles } from './bucket-settle';
import { isWrongLastSequence } from './jetstream-errors';
import { createKvEntry, kvBucketOpener, openOnce, readKvRecord } from './kv-bucket';

/** A gate record and the KV revision it was read at (the compare-and-set guard of its next write). */
export interface GateEntry {
  name: string;
  record: GateRecord;
  revision: number;
}

const MAX_CAS_ATTEMPTS = 50;
// Windows last an hour at most and idle records are removed after minutes: an entry untouched for a day is
// a leftover (its delete marker, or a record of a key whose run outlived every planner's pass).
const TTL_MS = 24 * 60 * 60_000;

/** The entry of `key` in `scope`: a hash, so any key text fits KV's key alphabet and another scope's never meets it. */
export function gateEntryName(scope: string, key: string): string {
  return `g.${createHash('sha256').update(`${scope}\n${key}`, 'utf8').digest('hex').slice(0, 40)}`;
}

/** A short stable token of `key` in `scope` for run ids (`trg-<trigger>-w<token>-<opened>`). */
export function gateKeyToken(scope: string, key: string): string {
  return createHash('sha256').update(`${scope}\n${key}`, 'utf8').digest('hex').slice(0, 12);
}

/** Opens (creating when missing) the `dura_run_gates` bucket: one key per debounce / skip-if-running key. */
export const openGateBucket = kvBucketOpener(BUCKETS.runGates, {
  ttl: TTL_MS,
  description: 'Dura debounce windows and skip-if-running keys: one entry per key (compare-and-set)',
});

export interface RunGateDeps {
  js: JetStreamClient;
  replicas?: number;
  /** Where a run stands (its folded log, or a read model): asked for the key's last run only. */
  phaseOf: (runId: string) => Promise<RunPhase>;
  clock?: () => number;
}

/**
 * The shared gate records of debounce and skip-if-running, written only with compare-and-set on the entry's
 * revision: planners and projectors deciding for one key at once never lose each other's writes, and every
 * decision is made by `@dura/core`'s pure `arrive` from the record the write was guarded by.
 */
export function createRunGates(deps: RunGateDeps) {
  const clock = deps.clock ?? Date.now;
  const open = openOnce(() => openGateBucket(deps.js, deps.replicas));
  const listKeys = bucketKeyLister(deps.js, BUCKETS.runGates);

  async function read(name: string): Promise<GateEntry | undefined> {
    const read = await readKvRecord(await open(), name, GateRecordSchema);
    return read && { name, ...read };
  }

  /** Writes `record` if the entry is still at `revision` (0: absent); its new revision, or undefined if another wrote first. */
  async function compareAndSet(
    name: string,
    record: GateRecord,
    revision: number,
  ): Promise<number | undefined> {
    const kv = await open();
    try {
      return revision === 0
        ? await createKvEntry(kv, name, JSON.stringify(record))
        : await whileBucketSettles(() => kv.update(name, JSON.stringify(record), revision));
    } catch (err) {
      if (isWrongLastSequence(err)) return undefined;
      throw err;
    }
  }

  /** The key's run in flight per `record`, asking `phaseOf` only when there is a run to ask about. */
  async function inFlight(record: GateRecord | undefined, now: number): Promise<string | undefined> {
    const run = record?.run;
    if (!run) return undefined;
    return runInFlight(record, await deps.phaseOf(run.runId), now);
  }

  return {
    read,
    compareAndSet,
    inFlight,
    clock,
    /** Every entry name in the bucket (a removed one may be listed until its marker expires: read to know). */
    async names(): Promise<string[]> {
      await open();
      return listKeys();
    },
    /** Removes the entry read at `revision`; false when it changed meanwhile. */
    async remove(name: string, revision: number): Promise<boolean> {
      try {
        await (await open()).delete(name, { previousSeq: revision });
        return true;
      } catch (err) {
        if (isWrongLastSequence(err)) return false;
        throw err;
      }
    },
    /**
     * Decides what the gate of `arrival`'s key does with it (start, debounce, skip, or nothing for an event
     * taken already) and writes that decision, re-reading and deciding again after each lost race.
     */
    async arrive(arrival: Omit<Arrival, 'now' | 'inFlight'>): Promise<GateOutcome> {
      const name = gateEntryName(arrival.scope, arrival.key);
      for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt += 1) {
        const entry = await read(name);
        const now = clock();
        const asks = arrival.skipIfRunning && !arrival.debounce;
        const running = asks ? await inFlight(entry?.record, now) : undefined;
        const { record, outcome } = arrive(entry?.record, { ...arrival, now, inFlight: running });
        if (record === entry?.record) return outcome;
        if ((await compareAndSet(name, record, entry?.revision ?? 0)) !== undefined) return outcome;
        // Another replica wrote first: a short random pause keeps the two from colliding again.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));
      }
      throw new DuraError(
        'gate_contended',
        `the gate of key "${arrival.key}" (${arrival.scope}) changed on each of ${MAX_CAS_ATTEMPTS} tries; retry`,
        { retryable: true },
      );
    },
  };
}

export type RunGates = ReturnType<typeof createRunGates>;
