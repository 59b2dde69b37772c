import type { RunEvent } from '@dura/contracts';
import { fold, LruCache, type RunState } from '@dura/core';

export interface CachedRun {
  state: RunState;
  /** Id of the last folded event: the causation of whatever the planner appends next. */
  lastEventId: string | undefined;
  /** The last folded event's trace (W3C traceparent), which a signal to the run continues; unset: not known. */
  lastTrace?: string;
  /** Event count of the state the run's newest known snapshot holds (0: none), to space snapshots out. */
  snapshotCount: number;
}

/** `run` with `events` (non-empty, in log order, right behind its state) folded in. */
export function folded<R extends CachedRun>(run: R, events: readonly RunEvent[]): R {
  const last = events.at(-1) as RunEvent;
  const { lastTrace: _previous, ...rest } = run;
  return {
    ...rest,
    state: fold(events, run.state),
    lastEventId: last.meta.id,
    ...(last.meta.trace ? { lastTrace: last.meta.trace } : {}),
  } as R;
}

/**
 * A bounded LRU of folded runs. Only a cache (invariant 1): a drive starts by reading the log's tail after
 * `state.lastSeq`, and within a drive the state after our own append is trusted only because the next append
 * is guarded by that same sequence; so a stale entry costs a longer read or a lost race, never a wrong
 * decision. A run not in it is resumed from its snapshot (KV) and the log's tail after it, or from the whole log.
 */
export class RunStateCache extends LruCache<string, CachedRun> {
  constructor(capacity: number) {
    super(capacity);
  }
}
