import type { EventData, RunEvent, RunEventOf } from '@dura/contracts';
import { InvalidTransition } from './errors';
import { canApply, STATUS_AFTER } from './lifecycle';
import { initialRunState, type CallState, type RunState } from './run-state';

/**
 * The one fold. Pure: the same state and event always give the same next state, and the input is never mutated.
 * Throws `InvalidTransition` when the event cannot follow the state (wrong lifecycle status, unknown call,
 * another run's event, or a sequence that does not move forward).
 */
export function evolve(state: RunState, event: RunEvent): RunState {
  const reject = (reason: string): never => {
    throw new InvalidTransition(event.type, state.status, event.seq, reason);
  };
  if (event.seq <= state.lastSeq) reject(`sequence ${event.seq} is not after ${state.lastSeq}`);
  if (state.runId !== null && event.meta.runId !== state.runId) {
    reject(`event belongs to run ${event.meta.runId}, not ${state.runId}`);
  }
  if (!canApply(event.type, state.status)) reject('not allowed by the run lifecycle');

  const base: RunState = {
    ...state,
    status: STATUS_AFTER[event.type] ?? state.status,
    lastSeq: event.seq,
    eventCount: state.eventCount + 1,
    updatedAt: event.meta.ts,
  };
  return applyData(base, event, reject);
}

/**
 * Folds events into a state, starting from `from` (a snapshot) or from the empty run. Linear in the events:
 * the intermediate states are private to the fold, so the calls array it copied once is grown and updated
 * in place instead of being copied for every event (which made a 10,000-event fold take seconds).
 */
export function fold(events: Iterable<RunEvent>, from: RunState = initialRunState()): RunState {
  const outer = owned;
  owned = new WeakSet();
  try {
    let state = from;
    for (const event of events) state = evolve(state, event);
    return state;
  } finally {
    owned = outer;
  }
}

/** Arrays created by the running `fold`: no state outside it holds them, so they may change in place. */
let owned: WeakSet<CallState[]> | undefined;
/** callId → index, per calls array; built on first lookup, kept up to date as an owned array grows. */
const callIndexes = new WeakMap<readonly CallState[], Map<string, number>>();

function indexOfCall(calls: readonly CallState[], callId: string): number {
  let index = callIndexes.get(calls);
  if (!index) {
    index = new Map(calls.map((call, i) => [call.callId, i]));
    callIndexes.set(calls, index);
  }
  return index.get(callId) ?? -1;
}

function withCallAdded(calls: CallState[], call: CallState): CallState[] {
  if (owned?.has(calls)) {
    calls.push(call);
    callIndexes.get(calls)?.set(call.callId, calls.length - 1);
    return calls;
  }
  const copy = [...calls, call];
  owned?.add(copy);
  return copy;
}

function withCallReplaced(calls: CallState[], index: number, call: CallState): CallState[] {
  const target = owned?.has(calls) ? calls : calls.slice();
  if (target !== calls) owned?.add(target);
  target[index] = call;
  return target;
}

function applyData(state: RunState, event: RunEvent, reject: (reason: string) => never): RunState {
  switch (event.type) {
    case 'run_requested':
      if (event.data.request.runId !== event.meta.runId)
        reject(`the request names run ${event.data.request.runId}`);
      return {
        ...state,
        runId: event.meta.runId,
        request: event.data.request,
        correlationId: event.meta.correlationId,
        createdAt: event.meta.ts,
      };
    case 'run_rejected':
      return {
        ...state,
        runId: event.meta.runId,
        error: event.data.error,
        createdAt: state.createdAt ?? event.meta.ts,
      };
    case 'thought':
      return onThought(state, event, reject);
    case 'tool_call_requested':
      return onToolCallRequested(state, event, reject);
    case 'tool_call_completed':
      return resolveCall(state, event.data.callId, reject, (call) => ({
        ...call,
        status: 'completed',
        attempts: Math.max(call.attempts, event.data.attempt),
        resolvedSeq: event.seq,
        result: event.data.result,
      }));
    case 'tool_call_failed':
      return resolveCall(state, event.data.callId, reject, (call) => ({
        ...call,
        status: failedStatus(event.data),
        attempts: Math.max(call.attempts, event.data.attempt),
        error: event.data.error,
        ...(event.data.failRun ? { failRun: true } : {}),
        ...(event.data.retryable || event.data.error.code === OUTCOME_UNKNOWN
          ? {}
          : { resolvedSeq: event.seq }),
      }));
    case 'wait_requested':
      return { ...state, waiting: { ...event.data } };
    case 'signal_received': {
      const signals = [...state.signals, { ...event.data, seq: event.seq }];
      const verdict = operatorVerdict(state, event.data);
      if (verdict) {
        const calls = state.calls.map((call) =>
          call.callId === verdict.callId ? { ...call, operator: verdict.verdict } : call,
        );
        return { ...state, status: 'running', waiting: null, signals, calls };
      }
      const resumes = state.waiting?.kind === 'signal' && state.waiting.signal === event.data.name;
      return resumes ? { ...state, status: 'running', waiting: null, signals } : { ...state, signals };
    }
    case 'timer_fired':
      return state.waiting?.waitId === event.data.waitId
        ? { ...state, status: 'running', waiting: null }
        : state;
    case 'child_run_completed':
      return state.waiting?.kind === 'child' && state.waiting.childRunId === event.data.childRunId
        ? { ...state, status: state.status === 'waiting' ? 'running' : state.status, waiting: null }
        : state;
    case 'run_completed':
      return { ...state, output: event.data.output, openDecision: null };
    case 'run_failed':
      return { ...state, error: event.data.error, openDecision: null, waiting: null };
    case 'run_cancelled':
      return { ...state, openDecision: null, waiting: null };
    case 'run_started':
    case 'child_run_requested':
    case 'snapshot_taken':
    case 'budget_exceeded':
      return state;
  }
}

/** The error code a gateway reports when an unsafe call was interrupted and its outcome is unknown. */
export const OUTCOME_UNKNOWN = 'outcome_unknown';

function failedStatus(data: EventData<'tool_call_failed'>): CallState['status'] {
  if (data.retryable) return 'pending';
  return data.error.code === OUTCOME_UNKNOWN ? 'unknown' : 'failed';
}

/** A `confirm` or `skip` signal answering the operator wait of an unknown call. */
function operatorVerdict(
  state: RunState,
  data: EventData<'signal_received'>,
): { callId: string; verdict: NonNullable<CallState['operator']> } | undefined {
  if (state.waiting?.kind !== 'operator' || (data.name !== 'confirm' && data.name !== 'skip'))
    return undefined;
  const payload =
    data.payload !== null && typeof data.payload === 'object' && !Array.isArray(data.payload)
      ? data.payload
      : {};
  const callId = typeof payload.callId === 'string' ? payload.callId : state.waiting.callId;
  if (callId !== state.waiting.callId) return undefined;
  const verdict = {
    action: data.name,
    signalId: data.signalId,
    ...(payload.result === undefined ? {} : { result: payload.result }),
  } as const;
  return callId === undefined ? undefined : { callId, verdict };
}

function onThought(
  state: RunState,
  event: RunEventOf<'thought'>,
  reject: (reason: string) => never,
): RunState {
  if (state.openDecision !== null)
    reject(`the decision at seq ${state.openDecision.seq} is not fully recorded yet`);
  if (state.calls.some((call) => call.status === 'pending' || call.status === 'unknown')) {
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
    usage: {
      inputTokens: state.usage.inputTokens + event.data.usage.inputTokens,
      outputTokens: state.usage.outputTokens + event.data.usage.outputTokens,
    },
  };
}

function onToolCallRequested(
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
  };
  const calls = withCallAdded(state.calls, call);
  const allRecorded = planned.every((p) => indexOfCall(calls, p.callId) >= 0);
  return { ...state, steps: call.step, calls, openDecision: allRecorded ? null : state.openDecision };
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
