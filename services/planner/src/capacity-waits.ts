import { CAPACITY_WAIT_PREFIX } from '@dura/agents';
import type { RunState, WaitState } from '@dura/core';

/**
 * The run's open wait for capacity (a slot, a concurrency key, its turn in a rate's line), which a drive woken
 * for capacity (see `DriveOptions.wake`) ends by having its timer fire now: the timer fires once, so the wait
 * ends once and one drive goes on from it. A wake that finds the run waiting for a ticket costs one more look
 * at its ticket, which it keeps. Undefined when the run waits for no capacity: then whatever ended its wait
 * drives it, and the wake does nothing.
 */
export function capacityWaitOf(state: RunState): WaitState | undefined {
  const wait = state.waiting;
  if (state.status !== 'waiting' || !wait?.waitId.startsWith(CAPACITY_WAIT_PREFIX)) return undefined;
  return wait;
}
