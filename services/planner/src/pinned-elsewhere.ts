import type { RunState } from '@dura/core';
import type { AgentCatalog } from '@dura/agents';
import { RetryLater, type Logger } from '@dura/service-kit';
import type { Parking } from './parking';

/**
 * A run pinned to a version this replica does not serve is left to a replica that does: parked until one
 * is up (true), or, without parking, offered again later (a `RetryLater` after `notServedDelayMs`, default 5 s).
 */
export async function parkedElsewhere(
  deps: {
    model: Partial<Pick<AgentCatalog, 'serves'>>;
    log: Logger;
    parking?: Parking;
    notServedDelayMs?: number;
  },
  state: RunState,
): Promise<boolean> {
  const pinned = state.pinned;
  if (!pinned || !deps.model.serves || deps.model.serves(pinned)) return false;
  if (deps.parking) {
    await deps.parking.park(state.runId as string, pinned, state.lastSeq);
    deps.log.info('run parked for a planner that serves its pinned version', {
      runId: state.runId,
      pinned: `${pinned.agent}@${pinned.version} (prompt ${pinned.promptVersion})`,
    });
    return true;
  }
  throw new RetryLater(
    `run ${state.runId ?? ''} is pinned to agent ${pinned.agent}@${pinned.version} (prompt ${pinned.promptVersion}), ` +
      'which this planner does not serve; leaving it to a planner that does',
    deps.notServedDelayMs ?? 5_000,
  );
}
