import type { RunEvent } from '@dura/contracts';
import { evolve } from './evolve';
import { initialRunState, type RunState } from './run-state';

/**
 * The causation chain of the event at `seq` in a run's log (`events`, in log order, up to at least `seq`):
 * the seqs of that event, its cause, its cause's cause, back to the root. An event's cause is the event its
 * `meta.causationId` names (the latest with that id before it: ids repeat only for a redelivery after the
 * dedupe window), except where the log says more than the id does:
 *
 * - a `signal_received` that resolved a wait was caused by that wait's `wait_requested`;
 * - a `wait_requested` for a call (an approval, a control call) was caused by that call's `tool_call_requested`;
 * - the outcome of a call a signal released (`tool_call_completed` / `tool_call_failed` of a call whose
 *   approval or operator wait that signal resolved) was caused by that `signal_received`, not only by its
 *   request: the approval is why the call ran.
 *
 * Which wait a signal resolved is what the run's own fold says (the waits it closed), so the chain follows
 * the same rules as the run. Causes are always earlier in the log; a cause outside it ends the chain.
 * Empty when there is no event at `seq`.
 */
export function causeChain(events: readonly RunEvent[], seq: number): number[] {
  const upTo = events.filter((event) => event.seq <= seq);
  if (upTo.at(-1)?.seq !== seq) return [];
  const links = resolvedLinks(upTo);
  const indexOf = new Map<number, number>(upTo.map((event, index) => [event.seq, index]));
  const chain: number[] = [];
  let index = upTo.length - 1;
  for (let event = upTo[index]; event;) {
    chain.push(event.seq);
    const linked = links.get(event.seq);
    if (linked !== undefined) {
      index = indexOf.get(linked) ?? -1;
      event = upTo[index];
      continue;
    }
    const cause = event.meta.causationId;
    if (cause === undefined) break;
    do index -= 1;
    while (index >= 0 && upTo[index]?.meta.id !== cause);
    event = index >= 0 ? upTo[index] : undefined;
  }
  return chain;
}

/** The causes the log shows beyond `meta.causationId`: event seq -> the seq of its cause (always earlier). */
function resolvedLinks(events: readonly RunEvent[]): Map<number, number> {
  const links = new Map<number, number>();
  const waitSeq = new Map<string, number>(); // open waits: waitId -> seq of its wait_requested
  const requestSeq = new Map<string, number>(); // callId -> seq of its latest tool_call_requested
  const releasedBy = new Map<string, number>(); // callId -> seq of the signal that resolved its wait
  let state: RunState = initialRunState();
  for (const event of events) {
    const before = state.waits;
    try {
      state = evolve(state, event);
    } catch {
      continue; // not part of the run's state: the projection skips it too
    }
    switch (event.type) {
      case 'tool_call_requested':
        requestSeq.set(event.data.callId, event.seq);
        break;
      case 'wait_requested': {
        waitSeq.set(event.data.waitId, event.seq);
        const request = event.data.callId === undefined ? undefined : requestSeq.get(event.data.callId);
        if (request !== undefined) links.set(event.seq, request);
        break;
      }
      case 'signal_received': {
        const closed = before.filter((wait) => !state.waits.some((w) => w.waitId === wait.waitId));
        const wait = closed[0];
        const opened = wait === undefined ? undefined : waitSeq.get(wait.waitId);
        if (opened !== undefined) links.set(event.seq, opened);
        for (const w of closed) if (w.callId !== undefined) releasedBy.set(w.callId, event.seq);
        break;
      }
      case 'tool_call_completed':
      case 'tool_call_failed': {
        const signal = releasedBy.get(event.data.callId);
        if (signal !== undefined) links.set(event.seq, signal);
        break;
      }
      default:
        break;
    }
  }
  return links;
}
