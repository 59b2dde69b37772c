import type { EventData, RunEventOf } from '@dura/contracts';
import { callApprovalOf } from './approval';
import { indexOfCall, withCallReplaced } from './call-list';
import { completeCall, failCall, settleCall } from './evolve-calls';
import { isTerminal, type CallState, type RunState, type WaitState } from './run-state';
import { APPROVE_SIGNAL, RAISE_BUDGET_SIGNAL, REJECT_SIGNAL, RETRY_SIGNAL } from './signals';

/* The fold's part for waits: opening them, and what ends them (a signal, an approval, a timer). */

/** The open waits changed: `waiting` mirrors the first, and a live run waits exactly while any is open. */
export function withWaits(state: RunState, waits: WaitState[]): RunState {
  const live = state.status === 'running' || state.status === 'waiting';
  return {
    ...state,
    waits,
    waiting: waits[0] ?? null,
    status: live ? (waits.length > 0 ? 'waiting' : 'running') : state.status,
  };
}

export function withoutWait(state: RunState, waitId: string): RunState {
  return withWaits(
    state,
    state.waits.filter((wait) => wait.waitId !== waitId),
  );
}

/** A wait opened: its id is new among the open waits. */
export function onWaitRequested(
  state: RunState,
  event: RunEventOf<'wait_requested'>,
  reject: (reason: string) => never,
): RunState {
  if (state.waits.some((wait) => wait.waitId === event.data.waitId))
    reject(`wait ${event.data.waitId} is already open`);
  return withWaits(state, [...state.waits, { ...event.data }]);
}

export function onSignal(state: RunState, event: RunEventOf<'signal_received'>): RunState {
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

function payloadObject(payload: unknown): Record<string, unknown> {
  return payload !== null && typeof payload === 'object' && !Array.isArray(payload)
    ? (payload as Record<string, unknown>)
    : {};
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

export function onTimerFired(state: RunState, event: RunEventOf<'timer_fired'>): RunState {
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
