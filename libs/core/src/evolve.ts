import {
  CONTROL_TOOLS,
  DEFAULT_TENANT,
  type EventData,
  type RunEvent,
  type RunEventOf,
} from '@dura/contracts';
import { InvalidTransition } from './errors';
import { canApply, STATUS_AFTER } from './lifecycle';
import { initialRunState, isTerminal, type CallState, type RunState, type WaitState } from './run-state';
import { callApprovalOf } from './approval';
import { APPROVE_SIGNAL, RAISE_BUDGET_SIGNAL, REJECT_SIGNAL, RETRY_SIGNAL } from './signals';

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
        tenant: event.data.request.tenant ?? DEFAULT_TENANT,
        correlationId: event.meta.correlationId,
        createdAt: event.meta.ts,
      };
    case 'run_rejected':
      return {
        ...state,
        runId: event.meta.runId,
        tenant: event.data.tenant ?? state.tenant,
        error: event.data.error,
        createdAt: state.createdAt ?? event.meta.ts,
      };
    case 'run_started':
      return {
        ...state,
        pinned: event.data.pinned ?? null,
        budget: {
          ...state.budget,
          limits: event.data.budget ?? {},
          policy: event.data.budgetPolicy ?? 'fail',
          startedAt: event.meta.ts,
        },
      };
    case 'thought':
      return onThought(state, event, reject);
    case 'budget_reserved':
      return { ...state, budget: { ...state.budget, reserved: { ...event.data } } };
    case 'context_summarized':
      return {
        ...state,
        summary: { throughStep: event.data.throughStep, text: event.data.summary },
        usage: addUsage(state.usage, event.data.usage),
        budget: {
          ...state.budget,
          reserved: null,
          costUsd: state.budget.costUsd + (event.data.costUsd ?? 0),
        },
      };
    case 'tool_call_requested':
      return onToolCallRequested(state, event, reject);
    case 'tool_call_completed':
      return resolveCall(state, event.data.callId, reject, (call) => ({
        ...call,
        status: 'completed',
        attempts: Math.max(call.attempts, event.data.attempt),
        resolvedSeq: event.seq,
        result: event.data.result,
        ...(event.data.resultRef ? { resultRef: event.data.resultRef } : {}),
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
    case 'wait_requested': {
      if (state.waits.some((wait) => wait.waitId === event.data.waitId))
        reject(`wait ${event.data.waitId} is already open`);
      return withWaits(state, [...state.waits, { ...event.data }]);
    }
    case 'signal_received':
      return onSignal(state, event);
    case 'timer_fired':
      return onTimerFired(state, event);
    case 'child_run_requested':
      return onChildRequested(state, event, reject);
    case 'child_run_completed':
      return onChildCompleted(state, event);
    case 'run_completed':
      return { ...state, output: event.data.output, openDecision: null };
    case 'run_failed':
      return { ...withWaits(state, []), error: event.data.error, openDecision: null };
    case 'run_cancelled':
      return { ...withWaits(state, []), openDecision: null };
    case 'snapshot_taken':
    case 'budget_exceeded':
      return state;
  }
}

function addUsage(a: RunState['usage'], b: RunState['usage']): RunState['usage'] {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
}

/** The open waits changed: `waiting` mirrors the first, and a live run waits exactly while any is open. */
function withWaits(state: RunState, waits: WaitState[]): RunState {
  const live = state.status === 'running' || state.status === 'waiting';
  return {
    ...state,
    waits,
    waiting: waits[0] ?? null,
    status: live ? (waits.length > 0 ? 'waiting' : 'running') : state.status,
  };
}

function withoutWait(state: RunState, waitId: string): RunState {
  return withWaits(
    state,
    state.waits.filter((wait) => wait.waitId !== waitId),
  );
}

/** Resolves a still-open call in place (a wait's outcome); an already resolved call stays as it is. */
function settleCall(state: RunState, callId: string | undefined, update: (call: CallState) => CallState) {
  if (callId === undefined) return state;
  const index = indexOfCall(state.calls, callId);
  const call = state.calls[index];
  if (!call || call.status !== 'pending') return state;
  return { ...state, calls: withCallReplaced(state.calls, index, update(call)) };
}

function completeCall(seq: number, result: CallState['result']) {
  return (call: CallState): CallState => ({
    ...call,
    status: 'completed',
    attempts: Math.max(1, call.attempts),
    resolvedSeq: seq,
    result: result ?? null,
  });
}

function failCall(seq: number, code: string, message: string, failRun = false) {
  return (call: CallState): CallState => ({
    ...call,
    status: 'failed',
    attempts: Math.max(1, call.attempts),
    resolvedSeq: seq,
    error: { code, message, retryable: false },
    ...(failRun ? { failRun: true } : {}),
  });
}

function payloadObject(payload: unknown): Record<string, unknown> {
  return payload !== null && typeof payload === 'object' && !Array.isArray(payload)
    ? (payload as Record<string, unknown>)
    : {};
}

function onSignal(state: RunState, event: RunEventOf<'signal_received'>): RunState {
  const signals = [...state.signals, { ...event.data, seq: event.seq }];
  const withSignal = { ...state, signals };
  // Recorded after the end for the record's sake; nothing resumes a finished run.
  if (isTerminal(state.status)) return withSignal;
  const verdict = operatorVerdict(state, event.data);
  if (verdict) {
    const calls = state.calls.map((call) =>
      call.callId === verdict.callId ? { ...call, operator: verdict.verdict } : call,
    );
    const operatorWait = state.waits.find((wait) => wait.kind === 'operator');
    return operatorWait
      ? withoutWait({ ...withSignal, calls }, operatorWait.waitId)
      : { ...withSignal, calls };
  }
  const name = event.data.name;
  // The operator wait a code agent's run stopped in names no call: `retry` lifts it and the planner decides again.
  const stopped = state.waits.find((wait) => wait.kind === 'operator' && wait.callId === undefined);
  if (stopped && name === RETRY_SIGNAL) return withoutWait(withSignal, stopped.waitId);
  const payload = payloadObject(event.data.payload);
  const approval =
    name === APPROVE_SIGNAL || name === REJECT_SIGNAL ? approvalWaitFor(state, payload) : undefined;
  if (approval) {
    const [approved, rejection] = callApprovalOf(name, event.data.payload);
    const decided = decideApproval(withSignal, approval, approved, event.seq, rejection);
    return withoutWait(decided, approval.waitId);
  }
  if (name === RAISE_BUDGET_SIGNAL) {
    const raised = raiseBudget(withSignal, payload);
    const budgetWait = raised.waits.find((wait) => wait.kind === 'budget');
    return budgetWait ? withoutWait(raised, budgetWait.waitId) : raised;
  }
  const wait = state.waits.find((w) => w.kind === 'signal' && w.signal === name);
  if (!wait) return withSignal;
  const settled = settleCall(withSignal, wait.callId, completeCall(event.seq, event.data.payload ?? null));
  return withoutWait(settled, wait.waitId);
}

/** The approval wait a signal answers: the one of `payload.callId`, else the oldest. */
function approvalWaitFor(state: RunState, payload: Record<string, unknown>): WaitState | undefined {
  const wanted = typeof payload.callId === 'string' ? payload.callId : undefined;
  return state.waits.find((w) => w.kind === 'approval' && (wanted === undefined || w.callId === wanted));
}

function decideApproval(
  state: RunState,
  wait: WaitState,
  approved: boolean,
  seq: number,
  rejection: string,
  failRun = false,
): RunState {
  const callId = wait.callId;
  if (callId === undefined) return state;
  const index = indexOfCall(state.calls, callId);
  const call = state.calls[index];
  if (!call?.approval || call.status !== 'pending') return state;
  const decided: CallState = {
    ...call,
    approval: { ...call.approval, decision: approved ? 'approved' : 'rejected' },
  };
  const next = approved
    ? decided
    : failCall(
        seq,
        'rejected',
        `${call.tool} (step ${call.step}) was not approved: ${rejection}`,
        failRun,
      )(decided);
  return { ...state, calls: withCallReplaced(state.calls, index, next) };
}

const BUDGET_KEYS = ['maxSteps', 'maxTokens', 'maxCostUsd', 'maxWallSeconds'] as const;

/** `raise_budget { maxSteps?, maxTokens?, maxCostUsd?, maxWallSeconds? }`: positive numbers replace limits. */
function raiseBudget(state: RunState, payload: Record<string, unknown>): RunState {
  const limits = { ...state.budget.limits };
  for (const key of BUDGET_KEYS) {
    const value = payload[key];
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) {
      limits[key] = key === 'maxSteps' || key === 'maxTokens' ? Math.floor(value) : value;
    }
  }
  return { ...state, budget: { ...state.budget, limits } };
}

function onTimerFired(state: RunState, event: RunEventOf<'timer_fired'>): RunState {
  if (isTerminal(state.status)) return state;
  const wait = state.waits.find((w) => w.waitId === event.data.waitId);
  if (!wait) return state; // resolved before its timer fired: nothing to do
  const seq = event.seq;
  switch (wait.kind) {
    case 'timer':
      return withoutWait(
        settleCall(state, wait.callId, completeCall(seq, { firedAt: event.meta.ts })),
        wait.waitId,
      );
    case 'approval': {
      const outcome = wait.onTimeout ?? 'reject';
      const timedOut = `nobody answered before ${wait.timeoutAt ?? 'the timeout'}`;
      return withoutWait(
        decideApproval(state, wait, outcome === 'approve', seq, timedOut, outcome === 'fail'),
        wait.waitId,
      );
    }
    case 'signal': {
      const message = `no "${wait.signal ?? ''}" signal arrived before ${wait.timeoutAt ?? 'the timeout'}`;
      const settled = settleCall(
        state,
        wait.callId,
        failCall(seq, 'signal_timed_out', message, wait.onTimeout === 'fail'),
      );
      return withoutWait(settled, wait.waitId);
    }
    default:
      return withoutWait(state, wait.waitId);
  }
}

/**
 * A child run requested: its id is new in this run, and the `dura.run_agent` call it serves (when named) is
 * pending and has no child yet. While the run waits (an earlier child of the same decision already opened its
 * wait) the request must name its call, so a child is only ever started for a recorded call.
 */
function onChildRequested(
  state: RunState,
  event: RunEventOf<'child_run_requested'>,
  reject: (reason: string) => never,
): RunState {
  const { childRunId, callId } = event.data;
  if (state.children.some((child) => child.childRunId === childRunId))
    reject(`child run ${childRunId} was already requested`);
  if (callId === undefined) {
    if (state.status === 'waiting')
      reject('a child run requested while the run waits must name the dura.run_agent call it serves');
  } else {
    const call = state.calls[indexOfCall(state.calls, callId)];
    if (!call) reject(`call ${callId} was never requested`);
    else if (call.tool !== CONTROL_TOOLS.runAgent)
      reject(`call ${callId} is a ${call.tool} call, not ${CONTROL_TOOLS.runAgent}`);
    else if (call.status !== 'pending') reject(`call ${callId} is already ${call.status}`);
    if (state.children.some((child) => child.callId === callId))
      reject(`call ${callId} already has a child run`);
  }
  return {
    ...state,
    children: [
      ...state.children,
      {
        childRunId,
        callId: callId ?? '',
        request: { ...event.data.request, runId: childRunId },
        status: 'running',
      },
    ],
  };
}

function onChildCompleted(state: RunState, event: RunEventOf<'child_run_completed'>): RunState {
  const { childRunId, status, output } = event.data;
  const children = state.children.map((child) =>
    child.childRunId === childRunId && child.status === 'running' ? { ...child, status } : child,
  );
  const withChildren = { ...state, children };
  if (isTerminal(state.status)) return withChildren;
  const wait = state.waits.find((w) => w.kind === 'child' && w.childRunId === childRunId);
  if (!wait) return withChildren;
  const update =
    status === 'completed'
      ? completeCall(event.seq, { status, ...(output === undefined ? {} : { output }) })
      : failCall(event.seq, `child_run_${status}`, `child run ${childRunId} ${status}`);
  return withoutWait(settleCall(withChildren, wait.callId, update), wait.waitId);
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
    requestedAt: event.meta.ts,
    ...(event.data.argsRef ? { argsRef: event.data.argsRef } : {}),
    ...(event.data.approval ? { approval: event.data.approval } : {}),
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
