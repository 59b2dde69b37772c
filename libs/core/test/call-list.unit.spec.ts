import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { callsOfKind, type CallKind } from '../src/call-kinds';
import { indexOfCall, withCallAdded, withCallReplaced } from '../src/call-list';
import { evolve, fold, initialRunState } from '../src/index';
import type { CallState } from '../src/run-state';
import { arbHistoryPlan, buildHistory } from '../src/testing';

function call(callId: string): CallState {
  return {
    callId,
    step: 1,
    tool: 'echo',
    args: {},
    idempotencyKey: `key-${callId}`,
    status: 'pending',
    attempts: 0,
    requestedSeq: 1,
    intentId: `intent-${callId}`,
  };
}

describe('calls arrays derived from one another', () => {
  it('find every call, including in two arrays grown from one source with different calls', () => {
    // given a source array, and two arrays derived from it that put different calls at the same index
    const source = withCallAdded([], call('a'));
    const left = withCallAdded(source, call('x'));
    const right = withCallAdded(withCallAdded(source, call('y')), call('x'));

    // then each answers for its own calls, whatever the other added since
    expect(indexOfCall(left, 'x')).toBe(1);
    expect(indexOfCall(left, 'y')).toBe(-1);
    expect(indexOfCall(right, 'y')).toBe(1);
    expect(indexOfCall(right, 'x')).toBe(2);
    expect(indexOfCall(source, 'x')).toBe(-1);
    expect(indexOfCall(source, 'a')).toBe(0);
    expect(indexOfCall(right, 'never')).toBe(-1);
  });

  it('keep a replaced call at its index', () => {
    const calls = withCallAdded(withCallAdded([], call('a')), call('b'));
    const replaced = withCallReplaced(calls, 1, { ...call('b'), status: 'completed' });

    expect(indexOfCall(replaced, 'b')).toBe(1);
    expect(replaced[1]?.status).toBe('completed');
    expect(calls[1]?.status).toBe('pending');
  });
});

describe('the calls of a kind', () => {
  const KINDS: Record<CallKind, (call: CallState) => boolean> = {
    notable: (call) =>
      call.status === 'pending' ||
      call.status === 'unknown' ||
      (call.status === 'failed' && call.failRun === true),
    failed: (call) => call.status === 'failed',
    offloaded: (call) => call.resultRef !== undefined,
  };
  const expectKinds = (calls: readonly CallState[]) => {
    for (const [kind, test] of Object.entries(KINDS))
      expect(callsOfKind(kind as CallKind, calls)).toEqual(calls.filter(test));
  };

  it('are the calls a filter finds, in order, along any history', () => {
    fc.assert(
      fc.property(arbHistoryPlan(), (plan) => {
        const events = buildHistory(plan);
        // Event by event (each state derived from the last) and in one fold (arrays changed in place).
        let state = initialRunState();
        for (const event of events) {
          state = evolve(state, event);
          expectKinds(state.calls);
        }
        expectKinds(fold(events).calls);
      }),
      { numRuns: 200 },
    );
  });

  it('follow a call through its outcome, in an array derived from another', () => {
    const calls = withCallAdded(withCallAdded([], call('a')), call('b'));
    const failed = withCallReplaced(calls, 0, { ...call('a'), status: 'failed', failRun: true });
    const done = withCallReplaced(failed, 1, { ...call('b'), status: 'completed' });
    const ids = (list: CallState[]) => list.map((c) => c.callId);

    expect(ids(callsOfKind('notable', calls))).toEqual(['a', 'b']);
    expect(ids(callsOfKind('notable', failed))).toEqual(['a', 'b']);
    expect(ids(callsOfKind('failed', failed))).toEqual(['a']);
    expect(ids(callsOfKind('notable', done))).toEqual(['a']);
    expect(ids(callsOfKind('failed', calls))).toEqual([]);
    expectKinds(done);
  });
});
