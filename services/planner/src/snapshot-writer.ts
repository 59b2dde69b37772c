import type { Logger } from '@dura/service-kit';
import type { CachedRun } from './run-state-cache';
import { encodeSnapshotOf } from './snapshot-codec';
import type { SnapshotStore } from './snapshot-store';

export interface SnapshotWriter {
  /**
   * Starts writing a snapshot of `run` in the background when it has grown by `every` events since its
   * last one, and returns the event count the newest snapshot covers. Never waits and never throws.
   */
  consider(run: CachedRun): number;
  /** Settles once every write started so far has finished; failures were logged, never thrown. */
  flush(): Promise<void>;
}

export function createSnapshotWriter(deps: {
  snapshots: SnapshotStore;
  every: number;
  log: Logger;
}): SnapshotWriter {
  const writing = new Map<string, Promise<void>>();
  const every = Math.max(1, Math.floor(deps.every));

  async function write(runId: string, run: CachedRun, eventId: string): Promise<void> {
    // Yield first: encoding and hashing a long run's state must not hold up the decision that triggered it.
    await new Promise((resolve) => setImmediate(resolve));
    await deps.snapshots.put(runId, encodeSnapshotOf(run.state, eventId));
    deps.log.debug('snapshot written', { runId, seq: run.state.lastSeq, events: run.state.eventCount });
  }

  return {
    consider(run) {
      const { runId, eventCount, lastSeq } = run.state;
      if (runId === null || run.lastEventId === undefined) return run.snapshotCount;
      if (eventCount - run.snapshotCount < every || writing.has(runId)) return run.snapshotCount;
      // Replicas may race to write the same run's snapshot; whichever lands last is still a valid snapshot,
      // at worst an older one, which costs a longer tail read and never a wrong state.
      const pending = write(runId, run, run.lastEventId)
        .catch((err: unknown) => {
          deps.log.warn('snapshot not written; resume reads a longer tail', { runId, seq: lastSeq, err });
        })
        .finally(() => writing.delete(runId));
      writing.set(runId, pending);
      return eventCount;
    },
    async flush() {
      await Promise.all(writing.values());
    },
  };
}
