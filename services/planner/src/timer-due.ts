import type { RunState, WaitState } from '@dura/core';
import type { EventStore } from '@dura/event-store';

/** When a wait's timer is due, as its timer task says (ISO time). */
export type TimerDue = (state: RunState, wait: WaitState) => Promise<string>;

/**
 * The due time of a wait's timer, the same whoever publishes it and whenever. An absolute wait is due at the
 * time it records. A relative one (`delayMs`: a sleep of N s, a timeout) is due that long after the broker
 * stored its call's intent: a planner's clock, ahead, behind or stepped, and a slow append (a stalled store)
 * move it no more than they move the broker's stamp, and a task published again after a crash keeps it.
 */
export function createTimerDue(store: Pick<EventStore, 'storedAt'>): TimerDue {
  return async (state, wait) => {
    const recorded = (wait.until ?? wait.timeoutAt) as string;
    if (wait.delayMs === undefined) return recorded;
    const intent = state.calls.find((call) => call.callId === wait.callId);
    const runId = state.runId;
    // Every relative wait belongs to a call; were its intent ever gone from the stream, the recorded reading
    // of the due time is the best left.
    if (intent === undefined || runId === null) return recorded;
    const storedAt = await store.storedAt(runId, intent.requestedSeq);
    if (storedAt === undefined) return recorded;
    return new Date(storedAt.getTime() + wait.delayMs).toISOString();
  };
}
