import type { EventStore } from '@dura/event-store';
import type { Logger } from '@dura/service-kit';
import { decodeSnapshot, type RunSnapshot } from './snapshot-codec';
import type { SnapshotStore } from './snapshot-store';

export interface SnapshotCheckDeps {
  store: EventStore;
  snapshots: SnapshotStore;
  log: Logger;
}

/**
 * The run's snapshot when it passes every check, itself and against the log: its event at `seq` must be
 * on the run's subject and be the event the snapshot names. Otherwise undefined, with a warning naming why;
 * the caller then folds the whole log. Never throws: a snapshot only ever saves reads.
 */
export async function trustedSnapshot(
  deps: SnapshotCheckDeps,
  runId: string,
): Promise<RunSnapshot | undefined> {
  const ignore = (reason: string, fields: Record<string, unknown> = {}): undefined => {
    deps.log.warn('snapshot ignored; folding the whole log', { runId, reason, ...fields });
    return undefined;
  };
  let bytes: Uint8Array | undefined;
  try {
    bytes = await deps.snapshots.get(runId);
  } catch (err) {
    return ignore('snapshot store unavailable', { err });
  }
  if (bytes === undefined) return undefined;
  const decoded = decodeSnapshot(bytes, runId);
  if (!decoded.ok) return ignore(decoded.reason);
  const { snapshot } = decoded;
  try {
    const anchor = await deps.store.readAt(runId, snapshot.seq);
    // A reset or recreated stream either has nothing of this run at `seq` (it ends before), or another event.
    if (anchor === undefined)
      return ignore(`the log has no event of this run at seq ${snapshot.seq}: the snapshot is stale`);
    if (anchor.meta.id !== snapshot.eventId)
      return ignore(
        `the event at seq ${snapshot.seq} is ${anchor.meta.id}, but the snapshot was taken after ${snapshot.eventId}`,
      );
  } catch (err) {
    return ignore(`cannot read the event at seq ${snapshot.seq}`, { err });
  }
  return snapshot;
}
