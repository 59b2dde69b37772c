import type { JetStreamClient } from '@nats-io/jetstream';
import { DuraError, type RunEvent } from '@dura/contracts';
import { initialRunState, InvalidTransition } from '@dura/core';
import type { EventStore } from '@dura/event-store';
import type { Logger } from '@dura/service-kit';
import { DURA_ATTRS, DURA_SPAN_EVENTS } from '@dura/telemetry';
import { trace } from '@opentelemetry/api';
import { folded, RunStateCache, type CachedRun } from './run-state-cache';
import { trustedSnapshot } from './snapshot-resume';
import { createSnapshotStore, type SnapshotStore } from './snapshot-store';
import { createSnapshotWriter } from './snapshot-writer';

export interface SnapshotOptions {
  /** Events a run grows by before its next snapshot (default 100): a resume reads at most about this many. */
  every?: number;
  /** Replicas of the bucket when this driver creates it (default 1). */
  replicas?: number;
  store?: SnapshotStore;
}

export const DEFAULT_SNAPSHOT_EVERY = 100;

// Snapshots are recorded only in KV, never as `snapshot_taken` events in the log. An append of ours would
// need the run's expected last sequence like any decision, so it would race the deciders and make one of
// them lose and re-fold for nothing, and it would move `lastSeq` past the very state it describes. A cache
// has no place in the truth anyway: the log stays free of it, and losing the bucket loses nothing.

/** The runs this process holds folded, and how one it does not hold is read back. */
export interface RunLoader {
  /**
   * The run as its log stands: the cached fold caught up with the log's tail, or resumed from its snapshot
   * (or the whole log) when not held. `through`, a sequence the log is known to hold, lets the read stop there,
   * with one message get beside it that tells whether the log went on past it (then that is read too);
   * `current`: the caller wrote the log up to `through` itself a moment ago, so nothing is asked after it.
   */
  load: (runId: string, through?: number, current?: boolean) => Promise<CachedRun>;
  /** `run` with `events` (in log order, right behind its state) folded in, held as the run's cached fold. */
  foldIn(run: CachedRun, events: readonly RunEvent[]): CachedRun;
  /**
   * A run whose whole log this process has just written (the intake's first append, guarded by sequence 0):
   * held as folded from `recorded`, so its first drive (given `afterSeq` = the last of them) reads nothing.
   * A run already held is left as it is.
   */
  adopt: (runId: string, recorded: readonly RunEvent[]) => void;
  /** Settles once the snapshot writes started so far have finished (call before stopping; tests use it). */
  flushSnapshots: () => Promise<void>;
}

const NOTHING_FOLDED: CachedRun = { state: initialRunState(), lastEventId: undefined, snapshotCount: 0 };

export function createRunLoader(deps: {
  store: EventStore;
  js: JetStreamClient;
  log: Logger;
  cacheSize?: number;
  /**
   * Snapshots bound what a fresh process reads to resume a long run: by default the KV bucket
   * `dura_snapshots` (R1) and one snapshot per 100 new events. `false` turns them off.
   */
  snapshots?: false | SnapshotOptions;
}): RunLoader {
  const cache = new RunStateCache(deps.cacheSize ?? 1000);
  const snapshotOptions = deps.snapshots === false ? undefined : (deps.snapshots ?? {});
  const snapshots =
    snapshotOptions &&
    (snapshotOptions.store ?? createSnapshotStore({ js: deps.js, replicas: snapshotOptions.replicas ?? 1 }));
  const writer =
    snapshots &&
    createSnapshotWriter({
      snapshots,
      every: snapshotOptions?.every ?? DEFAULT_SNAPSHOT_EVERY,
      log: deps.log,
    });

  /**
   * `from` with the log's events after it folded in. A run already folded up to some point has a short
   * tail, read by direct gets; `through` (a sequence the log is known to hold) lets that read stop there.
   */
  async function catchUp(
    runId: string,
    from: CachedRun,
    through?: number,
    current = false,
  ): Promise<CachedRun> {
    const fromSeq = from.state.lastSeq + 1;
    if (through === undefined || from.state.lastSeq === 0) {
      const tail =
        from.state.lastSeq === 0
          ? await deps.store.read(runId, { fromSeq })
          : await deps.store.readTail(runId, { fromSeq });
      return tail.length === 0 ? from : folded(from, tail);
    }
    // Already folded through it, and the caller wrote the log up to there itself: nothing to read.
    if (current && from.state.lastSeq >= through) return from;
    // The read stops at `through`; but the log may have gone on past it since the task naming it was sent (a
    // redelivered task, or one held up by a partition, while another replica drove the run on). A model asked
    // on the state at `through` would be asked again for an answer already recorded: so the first message
    // after it is asked of the stream leader beside the read, and whatever follows is read too.
    const edge = Math.max(through, from.state.lastSeq);
    const [upTo, next] = await Promise.all([
      from.state.lastSeq >= through ? [] : deps.store.readTail(runId, { fromSeq, through }),
      current ? [] : deps.store.readTail(runId, { fromSeq: edge + 1, through: edge + 1 }),
    ]);
    const reached = upTo.at(-1)?.seq ?? from.state.lastSeq;
    // A read that fell short of `through` (a leader elected a moment ago) is the driver's to refuse.
    if (reached < through || next.length === 0) return upTo.length === 0 ? from : folded(from, upTo);
    const rest = await deps.store.readTail(runId, { fromSeq: (next[0] as RunEvent).seq + 1 });
    return folded(from, [...upTo, ...next, ...rest]);
  }

  /** A run this process does not hold: its trusted snapshot and the log's tail after it, else the whole log. */
  async function resume(runId: string): Promise<CachedRun> {
    const snapshot =
      snapshots && (await trustedSnapshot({ store: deps.store, snapshots, log: deps.log }, runId));
    if (snapshot) {
      const from = {
        state: snapshot.state,
        lastEventId: snapshot.eventId,
        snapshotCount: snapshot.state.eventCount,
      };
      try {
        const run = await catchUp(runId, from);
        const tail = run.state.eventCount - from.snapshotCount;
        deps.log.debug('resumed from a snapshot', { runId, seq: snapshot.seq, tail });
        markResumed(run, snapshot.seq);
        return run;
      } catch (err) {
        if (!(err instanceof InvalidTransition)) throw err;
        const reason = `the log after seq ${snapshot.seq} does not follow it: ${err.message}`;
        deps.log.warn('snapshot ignored; folding the whole log', { runId, reason });
      }
    }
    const run = await catchUp(runId, NOTHING_FOLDED);
    markResumed(run, undefined);
    return run;
  }

  async function load(runId: string, through?: number, current?: boolean): Promise<CachedRun> {
    const cached = cache.get(runId);
    const loaded = cached ? await catchUp(runId, cached, through, current) : await resume(runId);
    if (loaded.state.runId === null) return loaded;
    const snapshotCount = writer?.consider(loaded) ?? loaded.snapshotCount;
    const next = snapshotCount === loaded.snapshotCount ? loaded : { ...loaded, snapshotCount };
    if (next !== cached) cache.set(runId, next);
    return next;
  }

  function foldIn(run: CachedRun, events: readonly RunEvent[]): CachedRun {
    const next = folded(run, events);
    cache.set(next.state.runId as string, next);
    return next;
  }

  function adopt(runId: string, recorded: readonly RunEvent[]): void {
    if (cache.get(runId) || recorded.length === 0) return;
    foldIn(NOTHING_FOLDED, recorded);
  }

  function flushSnapshots(): Promise<void> {
    return writer?.flush() ?? Promise.resolve();
  }

  return { load, foldIn, adopt, flushSnapshots };
}

/**
 * This process picked up a run it did not hold (a restart, another replica's run): the trace gets a span
 * event saying so. The run's trace itself goes on unbroken, since the context travels with its messages.
 */
function markResumed(run: CachedRun, snapshotSeq: number | undefined): void {
  if (run.state.runId === null || run.state.lastSeq === 0) return;
  trace.getActiveSpan()?.addEvent(DURA_SPAN_EVENTS.runResumed, {
    [DURA_ATTRS.runId]: run.state.runId,
    [DURA_ATTRS.eventSeq]: run.state.lastSeq,
    'dura.run.events': run.state.eventCount,
    'dura.run.status': run.state.status,
    ...(snapshotSeq === undefined ? {} : { 'dura.snapshot.seq': snapshotSeq }),
  });
}

/**
 * The log read ended before an event the decide task names: a stream leader elected a moment ago can answer
 * before it has applied every stored message. Acting on that read would ack the task and leave the run
 * waiting for nothing, so the task is redelivered with the consumer's growing backoff until the read
 * reaches the event (and dead-lettered, with this reason, if it never does).
 */
export function staleRead(log: Logger, runId: string, lastSeq: number, afterSeq: number): DuraError {
  log.warn('the log read ended before the event the decide task names; retrying it', {
    runId,
    readThrough: lastSeq,
    afterSeq,
  });
  return new DuraError(
    'log_read_behind',
    `run ${runId}: the log read ended at seq ${lastSeq}, before seq ${afterSeq} that the decide task names`,
    { retryable: true },
  );
}
