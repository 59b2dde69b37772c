import { CAPACITY_WAIT_PREFIX, isKeyWait } from '@dura/agents';
import type { EventDraft, RunState } from '@dura/core';

/**
 * What a drive woken by a freed slot records (see `DriveOptions.wake`): the end of the run's open wait for a
 * slot, whose timer would end it later, so that the call asks for admission again now. Undefined when the
 * run waits for no slot (a rate ticket's wait never ends early).
 */
export function endedBySlotFreed(state: RunState): EventDraft[] | undefined {
  const wait = state.waiting;
  if (
    state.status !== 'waiting' ||
    !wait?.waitId.startsWith(CAPACITY_WAIT_PREFIX) ||
    !isSlotWait(wait.reason)
  )
    return undefined;
  return [{ type: 'timer_fired', data: { waitId: wait.waitId } }];
}

/** A wait for a slot (concurrent calls, a concurrency key) ends when one is freed; a rate ticket's never early. */
function isSlotWait(reason: string | undefined): boolean {
  return reason !== undefined && (reason.endsWith('(concurrent calls)') || isKeyWait(reason));
}
