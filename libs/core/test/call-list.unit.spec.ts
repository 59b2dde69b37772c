import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { indexOfCall, notableCalls, withCallAdded, withCallReplaced } from '../src/call-list';
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

describe('the notable calls of a state', () => {
  const notable = (call: CallState) =>
    call.status === 'pending' ||
    call.status === 'unknown' ||
    (call.status === 'failed' && call.failRun === true);

  it('are the open calls and those failed so as to fail the run, in order, along any history', () => {
    fc.assert(
      fc.property(arbHistoryPlan(), (plan) => {
        const events = buildHistory(plan);
        // Event by event (each state derived from the last) and in one fold (arrays changed in place).
        let state = initialRunState();
        for (const event of events) {
          state = evolve(state, event);
          expect(notableCalls(state.calls)).toEqual(state.calls.filter(notable));
        }
        const folded = fold(events);
        expect(notableCalls(folded.calls)).toEqual(folded.calls.filter(notable));
      }),
      { numRuns: 200 },
    );
  });

  it('follow a call through its outcome, in an array derived from another', () => {
    const calls = withCallAdded(withCallAdded([], call('a')), call('b'));
    const failed = withCallReplaced(calls, 0, { ...call('a'), status: 'failed', failRun: true });
    const done = withCallReplaced(failed, 1, { ...call('b'), status: 'completed' });

    expect(notableCalls(calls).map((c) => c.callId)).toEqual(['a', 'b']);
    expect(notableCalls(failed).map((c) => [c.callId, c.status])).toEqual([
      ['a', 'failed'],
      ['b', 'pending'],
    ]);
    expect(notableCalls(done).map((c) => c.callId)).toEqual(['a']);
  });
});
