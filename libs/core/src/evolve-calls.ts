import type { EventData, RunEventOf } from '@dura/contracts';
import { callsOfKind } from './call-kinds';
import { indexOfCall, withCallAdded, withCallReplaced } from './call-list';
import type { CallState, RunState } from './run-state';

/* The fold's part for decisions and tool calls: a thought opens a decision, its intents are recorded one by
 * one, and observations resolve them. */

/** The error code a gateway reports when an unsafe call was interrupted and its outcome is unknown. */
export const OUTCOME_UNKNOWN = 'outcome_unknown';

function failedStatus(data: EventData<'tool_call_failed'>): CallState['status'] {
  if (data.retryable) return 'pending';
  return data.error.code === OUTCOME_UNKNOWN ? 'unknown' : 'failed';
}

export function addUsage(a: RunState['usage'], b: RunState['usage']): RunState['usage'] {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
}

export function onThought(
  state: RunState,
  event: RunEventOf<'thought'>,
  reject: (reason: string) => never,
): RunState {
  if (state.openDecision !== null)
    reject(`the decision at seq ${state.openDecision.seq} is not fully recorded yet`);
  if (
    callsOfKind('notable', state.calls).some((call) => call.status === 'pending' || call.status === 'unknown')
  ) {
    reject('tool calls are still unresolved');
  }
  const { decision } = event.data;
  if (decision.kind === 'tool_calls') {
    const ids = decision.calls.map((call) => call.callId);
    if (new Set(ids).size !== ids.length || ids.some((id) => indexOfCall(state.calls, id) >= 0)) {
      reject('the decision reuses a call id');
    }
  }
  return {
    ...state,
    decisions: state.decisions + 1,
    openDecision: { seq: event.seq, decision: event.data.decision },
    usage: addUsage(state.usage, event.data.usage),
    budget: {
      ...state.budget,
      reserved: null,
      costUsd: state.budget.costUsd + (event.data.costUsd ?? 0),
    },
    prompt: event.data.prompt
      ? {
          hash: event.data.prompt.hash,
          turns: state.turns.length,
          summaryThrough: state.summary?.throughStep ?? null,
        }
      : state.prompt,
    turns:
      decision.kind === 'tool_calls'
        ? [
            ...state.turns,
            {
              ...(event.data.content === undefined ? {} : { content: event.data.content }),
              callIds: decision.calls.map((call) => call.callId),
            },
          ]
        : state.turns,
  };
}

export function onToolCallRequested(
  state: RunState,
  event: RunEventOf<'tool_call_requested'>,
  reject: (reason: string) => never,
): RunState {
  const decision = state.openDecision?.decision;
  if (decision?.kind !== 'tool_calls') reject('no open decision asked for tool calls');
  const planned = decision.kind === 'tool_calls' ? decision.calls : [];
  if (!planned.some((call) => call.callId === event.data.callId)) {
    reject(`call ${event.data.callId} is not part of the open decision`);
  }
  if (indexOfCall(state.calls, event.data.callId) >= 0) reject(`call ${event.data.callId} already requested`);
  if (event.data.step !== state.steps + 1)
    reject(`step ${event.data.step} is not the next step (${state.steps + 1})`);
  const call: CallState = {
    callId: event.data.callId,
    step: event.data.step,
    tool: event.data.tool,
    args: event.data.args,
    idempotencyKey: event.data.idempotencyKey,
    status: 'pending',
    attempts: 0,
    requestedSeq: event.seq,
    intentId: event.meta.id,
    requestedAt: event.meta.ts,
    ...(event.data.argsRef ? { argsRef: event.data.argsRef } : {}),
    ...(event.data.approval ? { approval: event.data.approval } : {}),
  };
  const calls = withCallAdded(state.calls, call);
  const allRecorded = planned.every((p) => indexOfCall(calls, p.callId) >= 0);
  return { ...state, steps: call.step, calls, openDecision: allRecorded ? null : state.openDecision };
}

/** A call's result: the call is completed (a repeat of a resolved call's observation changes nothing). */
export function onToolCallCompleted(
  state: RunState,
  event: RunEventOf<'tool_call_completed'>,
  reject: (reason: string) => never,
): RunState {
  return resolveAttempt(state, event, reject, {
    status: 'completed',
    resolvedSeq: event.seq,
    result: event.data.result,
    ...(event.data.resultRef ? { resultRef: event.data.resultRef } : {}),
  });
}

/** A call's failure: retryable leaves it pending, an unknown outcome waits for the operator. */
export function onToolCallFailed(
  state: RunState,
  event: RunEventOf<'tool_call_failed'>,
  reject: (reason: string) => never,
): RunState {
  return resolveAttempt(state, event, reject, {
    status: failedStatus(event.data),
    error: event.data.error,
    ...(event.data.failRun ? { failRun: true } : {}),
    ...(event.data.retryable || event.data.error.code === OUTCOME_UNKNOWN ? {} : { resolvedSeq: event.seq }),
  });
}

/** An attempt's outcome resolves its call, which counts the attempt. */
function resolveAttempt(
  state: RunState,
  event: RunEventOf<'tool_call_completed' | 'tool_call_failed'>,
  reject: (reason: string) => never,
  outcome: Partial<CallState>,
): RunState {
  return resolveCall(state, event.data.callId, reject, (call) => ({
    ...call,
    attempts: Math.max(call.attempts, event.data.attempt),
    ...outcome,
  }));
}

function resolveCall(
  state: RunState,
  callId: string,
  reject: (reason: string) => never,
  update: (call: CallState) => CallState,
): RunState {
  const index = indexOfCall(state.calls, callId);
  if (index < 0) reject(`call ${callId} was never requested`);
  const call = state.calls[index] as CallState;
  // A second observation of a resolved call (a relay retry after the dedupe window) changes nothing.
  if (call.status !== 'pending' && call.status !== 'unknown') return state;
  return { ...state, calls: withCallReplaced(state.calls, index, update(call)) };
}

/** Resolves a still-open call in place (a wait's outcome); an already resolved call stays as it is. */
export function settleCall(
  state: RunState,
  callId: string | undefined,
  update: (call: CallState) => CallState,
) {
  if (callId === undefined) return state;
  const index = indexOfCall(state.calls, callId);
  const call = state.calls[index];
  if (!call || call.status !== 'pending') return state;
  return { ...state, calls: withCallReplaced(state.calls, index, update(call)) };
}

export function completeCall(seq: number, result: CallState['result']) {
  return (call: CallState): CallState => ({
    ...call,
    status: 'completed',
    attempts: Math.max(1, call.attempts),
    resolvedSeq: seq,
    result: result ?? null,
  });
}

export function failCall(seq: number, code: string, message: string, failRun = false) {
  return (call: CallState): CallState => ({
    ...call,
    status: 'failed',
    attempts: Math.max(1, call.attempts),
    resolvedSeq: seq,
    error: { code, message, retryable: false },
    ...(failRun ? { failRun: true } : {}),
  });
}
