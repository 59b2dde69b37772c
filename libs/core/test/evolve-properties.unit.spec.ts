import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { RunEvent } from '@dura/contracts';
import {
  InvalidTransition,
  evolve,
  fold,
  initialRunState,
  type RunState,
  type RunStatus,
} from '../src/index';
import {
  arbAnyEvent,
  arbGarbageHistory,
  arbHistoryPlan,
  arbValidHistory,
  buildHistory,
  deepFreeze,
  runEvent,
} from '../src/testing';
import type { HistoryPlan } from '../src/testing';
import { LATE_EVENT_TYPES } from './late-events';

const runs = { numRuns: 300 };

/** Folds with every state and event frozen, so a write anywhere inside evolve throws. */
function frozenFold(events: readonly RunEvent[], from: RunState = initialRunState()): RunState {
  return events.reduce((state, event) => evolve(deepFreeze(state), deepFreeze(event)), from);
}

/** Catches the error evolve throws, if any. */
function thrownBy(state: RunState, event: RunEvent): unknown {
  try {
    evolve(state, event);
  } catch (error) {
    return error;
  }
  return undefined;
}

function expectedStatus(plan: HistoryPlan): RunStatus {
  if (plan.intake !== 'accepted') return 'rejected';
  const byEnding: Record<HistoryPlan['ending'], RunStatus> = {
    complete: 'completed',
    fail: 'failed',
    budget: 'failed',
    cancel: 'cancelled',
    cancel_waiting: 'cancelled',
    cancel_with_pending: 'cancelled',
    crash_mid_decision: 'running',
    waiting: 'waiting',
    open: 'running',
  };
  return byEnding[plan.ending];
}

describe('the fold over generated valid histories', () => {
  it('never throws on a valid history, and ends where the history says', () => {
    fc.assert(
      fc.property(arbHistoryPlan(), (plan) => {
        const events = buildHistory(plan);
        const state = fold(events);
        expect(state.status).toBe(expectedStatus(plan));
        expect(state.eventCount).toBe(events.length);
        expect(state.lastSeq).toBe(events.at(-1)?.seq);
        const intents = events.filter((event) => event.type === 'tool_call_requested');
        expect(state.calls.map((call) => call.callId)).toEqual(intents.map((event) => event.data.callId));
        expect(state.steps).toBe(intents.length);
        const crashed = plan.intake === 'accepted' && plan.ending === 'crash_mid_decision';
        const stillPending = state.calls.filter((call) => call.status === 'pending').length;
        expect(stillPending).toBe(crashed ? plan.recorded % plan.tail.calls.length : 0);
        expect(state.openDecision !== null).toBe(crashed);
        for (const call of state.calls) {
          // The first final observation resolves a call; later duplicates never change it.
          const first = events.find(
            (e) =>
              (e.type === 'tool_call_completed' || (e.type === 'tool_call_failed' && !e.data.retryable)) &&
              e.data.callId === call.callId,
          );
          expect(call.resolvedSeq).toBe(first?.seq);
        }
      }),
      runs,
    );
  });

  it('folding all at once equals folding the rest onto any intermediate state', () => {
    fc.assert(
      fc.property(arbValidHistory(), (events) => {
        const whole = fold(events);
        for (let cut = 0; cut <= events.length; cut += 1) {
          const prefix = fold(events.slice(0, cut));
          expect(fold(events.slice(cut), prefix)).toEqual(whole);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('fold never writes to the state it starts from, though it grows its own copies in place', () => {
    fc.assert(
      fc.property(arbValidHistory(), fc.nat(), (events, at) => {
        const cut = at % (events.length + 1);
        const prefix = fold(events.slice(0, cut));
        const before = structuredClone(prefix);
        // Frozen: a push or an index write into the starting state's arrays throws.
        const from = deepFreeze(prefix);
        expect(fold(events.slice(cut), from)).toEqual(frozenFold(events));
        expect(prefix).toEqual(before);
        // Folding the same tail again from the same start gives the same state: nothing leaked between folds.
        expect(fold(events.slice(cut), from)).toEqual(fold(events));
      }),
      runs,
    );
  });

  it('resuming from a snapshot that went through JSON (as stored in KV) gives the same state', () => {
    fc.assert(
      fc.property(arbValidHistory(), fc.nat(), (events, at) => {
        const cut = at % (events.length + 1);
        const snapshot = JSON.parse(JSON.stringify(fold(events.slice(0, cut)))) as RunState;
        expect(fold(events.slice(cut), snapshot)).toEqual(fold(events));
      }),
      runs,
    );
  });

  it('never mutates its input state or event (everything is deep-frozen before each step)', () => {
    fc.assert(
      fc.property(arbValidHistory(), (events) => {
        const copy = structuredClone(events);
        expect(frozenFold(events)).toEqual(fold(copy));
        expect(events).toEqual(copy);
      }),
      runs,
    );
  });

  it('refuses, at any point, a stale sequence, another run, or an unknown call, leaving the state as it was', () => {
    const breakage = fc.constantFrom('stale_seq', 'other_run', 'unknown_call');
    fc.assert(
      fc.property(arbValidHistory(), fc.nat(), breakage, fc.nat(3), (events, at, kind, back) => {
        fc.pre(events.length >= 1);
        const cut = 1 + (at % events.length);
        const state = deepFreeze(fold(events.slice(0, cut)));
        const seq = state.lastSeq + 1;
        const runId = state.runId ?? 'run-1';
        const bad: RunEvent =
          kind === 'stale_seq'
            ? { ...(events[cut] ?? events[cut - 1]!), seq: Math.max(0, state.lastSeq - back) }
            : kind === 'other_run'
              ? runEvent('snapshot_taken', { atSeq: seq - 1 }, { seq, runId: `${runId}x` })
              : runEvent(
                  'tool_call_completed',
                  {
                    callId: 'call-999',
                    idempotencyKey: 'k',
                    result: null,
                    attempt: 1,
                    deduped: false,
                    durationMs: 1,
                  },
                  { seq, runId },
                );
        expect(thrownBy(state, bad)).toBeInstanceOf(InvalidTransition);
        expect(fold(events.slice(cut), state)).toEqual(fold(events));
      }),
      runs,
    );
  });

  it('after the run ended, refuses everything but observations, signals, timers and snapshots', () => {
    const late = new Set(LATE_EVENT_TYPES);
    const ended = arbValidHistory().filter((events) =>
      ['completed', 'failed', 'cancelled'].includes(fold(events).status),
    );
    fc.assert(
      fc.property(
        ended.chain((events) => fc.tuple(fc.constant(events), arbAnyEvent(fold(events).lastSeq + 1))),
        ([events, next]) => {
          const state = fold(events);
          const event = { ...next, meta: { ...next.meta, runId: state.runId! } };
          fc.pre(!late.has(event.type));
          expect(thrownBy(state, event)).toBeInstanceOf(InvalidTransition);
        },
      ),
      runs,
    );
  });
});

describe('the fold over random garbage', () => {
  it('either applies an event or throws InvalidTransition, never anything else', () => {
    fc.assert(
      fc.property(arbGarbageHistory(), (events) => {
        let state = initialRunState();
        for (const event of events) {
          try {
            state = evolve(deepFreeze(state), deepFreeze(event));
          } catch (error) {
            expect(error).toBeInstanceOf(InvalidTransition);
            expect((error as InvalidTransition).code).toBe('invalid_transition');
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('reaches deep states often enough to mean something', () => {
    const applied = fc.sample(arbGarbageHistory(), { numRuns: 300, seed: 42 }).map((events) => {
      let state = initialRunState();
      let count = 0;
      for (const event of events) {
        if (thrownBy(state, event) === undefined) {
          state = evolve(state, event);
          count += 1;
        }
      }
      return { count, status: state.status, calls: state.calls.length };
    });
    const statuses = new Set(applied.map((a) => a.status));
    for (const status of ['running', 'waiting', 'completed', 'cancelled', 'rejected'])
      expect(statuses).toContain(status);
    expect(applied.some((a) => a.calls > 0)).toBe(true);
    expect(Math.max(...applied.map((a) => a.count))).toBeGreaterThanOrEqual(6);
  });
});
