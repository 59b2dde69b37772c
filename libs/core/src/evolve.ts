import { DEFAULT_TENANT, type RunEvent } from '@dura/contracts';
import { foldingInPlace } from './call-list';
import { InvalidTransition } from './errors';
import { onChildCompleted, onChildRequested } from './evolve-children';
import {
  addUsage,
  onThought,
  onToolCallCompleted,
  onToolCallFailed,
  onToolCallRequested,
} from './evolve-calls';
import { onSignal, onTimerFired, onWaitRequested, withWaits } from './evolve-waits';
import { canApply, STATUS_AFTER } from './lifecycle';
import { initialRunState, type RunState } from './run-state';

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
 * in place instead of being copied for every event (see `foldingInPlace`).
 */
export function fold(events: Iterable<RunEvent>, from: RunState = initialRunState()): RunState {
  return foldingInPlace(() => {
    let state = from;
    for (const event of events) state = evolve(state, event);
    return state;
  });
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
        ...(event.data.concurrency ? { concurrency: event.data.concurrency } : {}),
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
      return onToolCallCompleted(state, event, reject);
    case 'tool_call_failed':
      return onToolCallFailed(state, event, reject);
    case 'wait_requested':
      return onWaitRequested(state, event, reject);
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
