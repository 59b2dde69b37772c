import type { Decision } from '@dura/contracts';
import { callsOfKind } from './call-kinds';
import { indexOfCall } from './call-list';
import { isDispatchable, openWaits } from './control';
import type { EventDraft } from './event-draft';
import { callId as callIdFor, idempotencyKey } from './idempotency';
import { isTerminal, type CallState, type ChildRunState, type RunState, type WaitState } from './run-state';
import { CANCEL_SIGNAL } from './signals';

/** What the planner must do next for a run, read off the folded state alone. */
export type PlannerAction =
  | { kind: 'start' }
  | { kind: 'record'; events: EventDraft[] }
  /**
   * Hand work out, again if need be (every receiver dedupes): tool calls to the gateway, the timers of open
   * waits, the requests of child runs still running.
   */
  | { kind: 'dispatch'; calls: CallState[]; timers: WaitState[]; children: ChildRunState[] }
  | { kind: 'decide' }
  | { kind: 'idle'; reason: 'not_requested' | 'waiting' | 'finished' };

/**
 * The planner's decider. Order matters: a recorded `cancel` signal ends the run first; then finish recording
 * an open decision, then (re-)dispatch pending calls, and only ask the model when nothing recorded is left
 * undone.
 */
export function nextAction(state: RunState): PlannerAction {
  if (state.status === 'none') return { kind: 'idle', reason: 'not_requested' };
  if (isTerminal(state.status)) return { kind: 'idle', reason: 'finished' };
  const cancel = cancelSignal(state);
  if (cancel) return { kind: 'record', events: [cancel] };
  if (state.status === 'pending') return { kind: 'start' };
  if (state.openDecision !== null)
    return { kind: 'record', events: followUps(state, state.openDecision.decision) };
  const waits = openWaits(state);
  if (waits.length > 0) return { kind: 'record', events: waits };
  // Only the calls still open, or failed so as to fail the run, matter here (not every call the run made).
  const notable = callsOfKind('notable', state.calls);
  const calls = notable.filter((call) => isDispatchable(state, call));
  const timers = state.waits.filter((wait) => wait.until !== undefined || wait.timeoutAt !== undefined);
  const children = state.children.filter(
    (child) =>
      child.status === 'running' &&
      state.waits.some((wait) => wait.kind === 'child' && wait.childRunId === child.childRunId),
  );
  if (calls.length + timers.length + children.length > 0)
    return { kind: 'dispatch', calls, timers, children };
  if (notable.some((call) => call.status === 'pending')) return { kind: 'idle', reason: 'waiting' };
  const unknown = notable.find((call) => call.status === 'unknown');
  if (unknown) return operatorAction(state, unknown);
  const fatal = notable.find((call) => call.status === 'failed' && call.failRun);
  if (fatal) {
    const message = `${fatal.tool} (step ${fatal.step}) failed and its policy fails the run: ${fatal.error?.message ?? ''}`;
    return {
      kind: 'record',
      events: [{ type: 'run_failed', data: { error: { code: 'tool_failed', message } } }],
    };
  }
  // Calls still open (awaiting a signal, a child, an approval) hold the next decision back.
  if (state.status === 'waiting' || notable.some((call) => call.status === 'pending'))
    return { kind: 'idle', reason: 'waiting' };
  return { kind: 'decide' };
}

/**
 * A recorded `cancel` signal ends a live run before anything else happens: no open decision is finished,
 * no call dispatched, no model asked. Calls already running report later; the fold records their results.
 */
function cancelSignal(state: RunState): EventDraft | undefined {
  const signal = state.signals.find((s) => s.name === CANCEL_SIGNAL);
  if (!signal) return undefined;
  return { type: 'run_cancelled', data: { reason: cancelReasonOf(signal) } };
}

/** The reason a run ends with when `signal` (a `cancel` signal) cancels it: its payload's `reason`, or a default. */
export function cancelReasonOf(signal: { signalId: string; payload?: unknown }): string {
  const payload = signal.payload;
  const given =
    payload !== null && typeof payload === 'object' && !Array.isArray(payload)
      ? (payload as Record<string, unknown>).reason
      : undefined;
  return typeof given === 'string' && given.length > 0
    ? given
    : `cancelled by signal ${signal.signalId} (no reason given)`;
}

/**
 * A call whose outcome is unknown (an unsafe tool interrupted by a crash) is never re-run blindly: the run
 * waits for an operator; `confirm` records it as done (with the result the operator gives), `skip` as failed.
 */
function operatorAction(state: RunState, call: CallState): PlannerAction {
  const verdict = call.operator;
  if (verdict?.action === 'confirm') {
    const data = {
      callId: call.callId,
      idempotencyKey: call.idempotencyKey,
      result: verdict.result ?? null,
      attempt: Math.max(1, call.attempts),
      deduped: false,
      durationMs: 0,
    };
    return { kind: 'record', events: [{ type: 'tool_call_completed', data }] };
  }
  if (verdict?.action === 'skip') {
    const error = {
      code: 'skipped_by_operator',
      message: `an operator skipped ${call.tool} (step ${call.step}) after its outcome was unknown`,
    };
    const data = {
      callId: call.callId,
      idempotencyKey: call.idempotencyKey,
      error,
      attempt: Math.max(1, call.attempts),
      retryable: false,
    };
    return { kind: 'record', events: [{ type: 'tool_call_failed', data }] };
  }
  if (state.waits.some((wait) => wait.kind === 'operator')) return { kind: 'idle', reason: 'waiting' };
  const wait = { waitId: `operator:${call.callId}`, kind: 'operator' as const, callId: call.callId };
  return { kind: 'record', events: [{ type: 'wait_requested', data: wait }] };
}

/** The events a recorded decision implies; derived, so a crash between them loses nothing. */
export function followUps(state: RunState, decision: Decision): EventDraft[] {
  switch (decision.kind) {
    case 'complete':
      return [
        { type: 'run_completed', data: decision.output === undefined ? {} : { output: decision.output } },
      ];
    case 'fail':
      return [{ type: 'run_failed', data: { error: decision.error } }];
    case 'tool_calls': {
      let step = state.steps;
      return decision.calls
        .filter((call) => indexOfCall(state.calls, call.callId) < 0)
        .map((call) => {
          step += 1;
          const key = idempotencyKey({ runId: state.runId ?? '', step, tool: call.tool, args: call.args });
          return {
            type: 'tool_call_requested',
            data: {
              callId: call.callId,
              step,
              tool: call.tool,
              args: call.args,
              idempotencyKey: key,
              ...(call.argsRef ? { argsRef: call.argsRef } : {}),
              ...(call.approval ? { approval: call.approval } : {}),
            },
          };
        });
    }
  }
}

/** Call id for the i-th call (0-based) of the next decision. */
export function nextCallId(state: RunState, index: number): string {
  return callIdFor(state.steps + index + 1);
}
