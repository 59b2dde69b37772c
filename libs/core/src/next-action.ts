import type { Decision, NewEvent } from '@dura/contracts';
import { callId as callIdFor, idempotencyKey } from './idempotency';
import { isTerminal, type CallState, type RunState } from './run-state';

type Draft = {
  [K in NewEvent['type']]: { type: K; data: Extract<NewEvent, { type: K }>['data'] };
}[NewEvent['type']];

/** What the planner must do next for a run, read off the folded state alone. */
export type PlannerAction =
  | { kind: 'start' }
  | { kind: 'record'; events: Draft[] }
  | { kind: 'dispatch'; calls: CallState[] }
  | { kind: 'decide' }
  | { kind: 'idle'; reason: 'not_requested' | 'waiting' | 'finished' };

export type EventDraft = Draft;

/**
 * The planner's decider. Order matters: finish recording an open decision before anything else, then
 * (re-)dispatch pending calls, and only ask the model when nothing recorded is left undone.
 */
export function nextAction(state: RunState): PlannerAction {
  if (state.status === 'none') return { kind: 'idle', reason: 'not_requested' };
  if (isTerminal(state.status)) return { kind: 'idle', reason: 'finished' };
  if (state.status === 'pending') return { kind: 'start' };
  if (state.openDecision !== null)
    return { kind: 'record', events: followUps(state, state.openDecision.decision) };
  const pending = state.calls.filter((call) => call.status === 'pending');
  if (pending.length > 0) return { kind: 'dispatch', calls: pending };
  if (state.status === 'waiting') return { kind: 'idle', reason: 'waiting' };
  return { kind: 'decide' };
}

/** The events a recorded decision implies; derived, so a crash between them loses nothing. */
export function followUps(state: RunState, decision: Decision): Draft[] {
  switch (decision.kind) {
    case 'complete':
      return [
        { type: 'run_completed', data: decision.output === undefined ? {} : { output: decision.output } },
      ];
    case 'fail':
      return [{ type: 'run_failed', data: { error: decision.error } }];
    case 'tool_calls': {
      const recorded = new Set(state.calls.map((call) => call.callId));
      let step = state.steps;
      return decision.calls
        .filter((call) => !recorded.has(call.callId))
        .map((call) => {
          step += 1;
          const key = idempotencyKey({ runId: state.runId ?? '', step, tool: call.tool, args: call.args });
          return {
            type: 'tool_call_requested',
            data: { callId: call.callId, step, tool: call.tool, args: call.args, idempotencyKey: key },
          };
        });
    }
  }
}

/** Call id for the i-th call (0-based) of the next decision. */
export function nextCallId(state: RunState, index: number): string {
  return callIdFor(state.steps + index + 1);
}
