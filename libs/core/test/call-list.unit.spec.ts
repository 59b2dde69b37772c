import { describe, expect, it } from 'vitest';
import { indexOfCall, withCallAdded, withCallReplaced } from '../src/call-list';
import type { CallState } from '../src/run-state';

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
