import { describe, expect, it } from 'vitest';
import { decisionEventId } from '@dura/core';
import { decisionIds } from '../src/decision-ids';

describe('decisionIds', () => {
  const thought = { type: 'thought', data: { step: 3, decision: { kind: 'tool_calls' } } };
  const intent = { type: 'tool_call_requested', data: { callId: 'call-3', tool: 'echo' } };
  const wait = { type: 'wait_requested', data: { waitId: 'capacity-1', reason: 'capacity of openai/x' } };

  it('places each event after the one it follows, and repeats them for the same decision (a retry is a duplicate)', () => {
    const ids = decisionIds('run-1', 41, [thought, intent]);
    expect(ids[0]?.startsWith(`${decisionEventId('run-1', 41, 0)}~`)).toBe(true);
    expect(ids[1]?.startsWith(`${decisionEventId('run-1', 41, 1)}~`)).toBe(true);
    expect(decisionIds('run-1', 41, [thought, intent])).toEqual(ids);
  });

  it('gives another decision at the same place other ids, so it is never taken for a duplicate of this one', () => {
    const turn = decisionIds('run-1', 41, [thought, intent]);
    const waited = decisionIds('run-1', 41, [wait]);
    const otherArgs = decisionIds('run-1', 41, [
      thought,
      { ...intent, data: { callId: 'call-3', tool: 'other' } },
    ]);
    expect(waited[0]).not.toBe(turn[0]);
    expect(otherArgs[0]).not.toBe(turn[0]);
    expect(otherArgs[1]).not.toBe(turn[1]);
    expect(new Set([...turn, ...waited, ...otherArgs]).size).toBe(5);
  });
});
