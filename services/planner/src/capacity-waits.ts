import { CAPACITY_WAIT_PREFIX } from '@dura/agents';
import type { EventDraft, RunState } from '@dura/core';

/**
 * What a drive woken for capacity records (see `DriveOptions.wake`): the end of the run's open wait for
 * capacity, whose timer would end it later, so that the call asks for admission again now. A run is woken when
 * a slot it waits for is freed, or when its turn in a rate's line came sooner than it was told; a wake that
 * finds it waiting for a ticket costs one more look at its ticket, which it keeps. Undefined when the run
 * waits for no capacity.
 */
export function endedBySlotFreed(state: RunState): EventDraft[] | undefined {
  const wait = state.waiting;
  if (state.status !== 'waiting' || !wait?.waitId.startsWith(CAPACITY_WAIT_PREFIX)) return undefined;
  return [{ type: 'timer_fired', data: { waitId: wait.waitId } }];
}
