import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { InvalidTransition, fold } from '../src/index';
import {
  RunLog,
  SpecificationFailed,
  arbValidHistory,
  assertMatches,
  deciderSpecification,
  deepFreeze,
  given,
  requestedData,
  runEvent,
} from '../src/testing';

describe('the decider specification helper', () => {
  const log = new RunLog().request();
  const start = log.next('run_started', {});

  it('passes when the state matches, and says where it does not', () => {
    given(log.events).when(start).then({ status: 'running' });
    expect(() => given(log.events).when(start).then({ status: 'waiting' })).toThrow(
      new SpecificationFailed('$.status: expected "waiting", got "running"'),
    );
  });

  it('accepts a callback for anything a shape cannot say', () => {
    given(log.events)
      .when(start)
      .then((state) => expect(state.updatedAt).toBe(start.meta.ts));
  });

  it('thenThrows passes on the expected error class and fails otherwise', () => {
    const again = log.next('run_requested', requestedData('run-1'));
    given(log.events).when(again).thenThrows(InvalidTransition);
    expect(() => given(log.events).when(start).thenThrows(InvalidTransition)).toThrow(
      /expected InvalidTransition, but got/,
    );
    expect(() => given(log.events).when(again).thenThrows(SpecificationFailed)).toThrow(
      /expected SpecificationFailed, but InvalidTransition: .* was thrown/,
    );
  });

  it('fails when the given history itself does not fold', () => {
    const broken = [runEvent('run_started', {}, { seq: 1 })];
    expect(() => given(broken).when(start).then({})).toThrow(InvalidTransition);
  });

  it('works for any decider', () => {
    const counter = deciderSpecification({
      initialState: () => 0,
      evolve: (n: number, by: number) => n + by,
      decide: (n: number) => (n > 2 ? 'stop' : 'go'),
    });
    counter.given([1, 1]).when(1).then(3);
    counter.given([1, 1]).whenDeciding().then('go');
    counter.given([5]).whenDeciding().then('stop');
  });
});

describe('assertMatches', () => {
  it('matches objects by the expected keys and arrays whole', () => {
    assertMatches({ a: 1, b: [{ c: 2, d: 3 }] }, { b: [{ c: 2 }] });
    expect(() => assertMatches({ b: [1, 2] }, { b: [1] })).toThrow(/\$\.b: expected 1 items/);
    expect(() => assertMatches({ a: null }, { a: { x: 1 } })).toThrow(/\$\.a: expected an object/);
    expect(() => assertMatches({ a: 0 }, { a: -0 })).toThrow(SpecificationFailed);
    expect(() => assertMatches({}, { a: undefined })).not.toThrow();
  });
});

describe('deepFreeze', () => {
  it('freezes nested objects and arrays', () => {
    const value = deepFreeze({ a: [{ b: 1 }] });
    expect(Object.isFrozen(value.a[0])).toBe(true);
    expect(() => {
      (value.a as { b: number }[]).push({ b: 2 });
    }).toThrow(TypeError);
  });
});

describe('RunLog', () => {
  it('numbers sequences with the gaps of a shared stream', () => {
    const log = new RunLog('r', [2, 0]).request().start().snapshot();
    expect(log.events.map((event) => event.seq)).toEqual([3, 4, 7]);
    expect(fold(log.events).status).toBe('running');
  });

  it('keeps the thought it recorded when intents are taken from it', () => {
    const log = new RunLog()
      .request()
      .start()
      .think([
        { tool: 'a.b', args: {} },
        { tool: 'c.d', args: {} },
      ])
      .intents();
    expect(log.events[2]).toMatchObject({
      type: 'thought',
      data: { decision: { calls: [{ callId: 'call-1' }, { callId: 'call-2' }] } },
    });
  });
});

describe('arbValidHistory', () => {
  it('covers every event type and every lifecycle status', () => {
    const samples = fc.sample(arbValidHistory(), { numRuns: 400, seed: 7 });
    const types = new Set(samples.flat().map((event) => event.type));
    const statuses = new Set(samples.map((events) => fold(events).status));
    expect([...types].sort()).toEqual(
      [
        'budget_exceeded',
        'child_run_completed',
        'child_run_requested',
        'run_cancelled',
        'run_completed',
        'run_failed',
        'run_rejected',
        'run_requested',
        'run_started',
        'signal_received',
        'snapshot_taken',
        'thought',
        'timer_fired',
        'tool_call_completed',
        'tool_call_failed',
        'tool_call_requested',
        'wait_requested',
      ].sort(),
    );
    expect([...statuses].sort()).toEqual([
      'cancelled',
      'completed',
      'failed',
      'rejected',
      'running',
      'waiting',
    ]);
  });
});
