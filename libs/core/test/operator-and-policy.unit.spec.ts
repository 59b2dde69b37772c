import { describe, expect, it } from 'vitest';
import { fold, nextAction, OUTCOME_UNKNOWN, RETRY_SIGNAL, type PlannerAction } from '../src/index';
import { RunLog } from '../src/testing';

const charge = { tool: 'pay.unsafe', args: { amount: 5 } };

/** A run whose unsafe call `call-1` was interrupted: the gateway reported its outcome unknown. */
function interrupted(): RunLog {
  const log = new RunLog().request().start().think([charge]).intents();
  const { idempotencyKey } = log.intent('call-1');
  const error = { code: OUTCOME_UNKNOWN, message: 'pay.unsafe was interrupted', retryable: false };
  return log.add('tool_call_failed', {
    callId: 'call-1',
    idempotencyKey,
    error,
    attempt: 1,
    retryable: false,
  });
}

function recordOnly(action: PlannerAction) {
  expect(action.kind).toBe('record');
  return action.kind === 'record' ? action.events : [];
}

describe('an unsafe call whose outcome is unknown', () => {
  it('is neither re-dispatched nor decided past: the planner asks an operator', () => {
    const state = fold(interrupted().events);
    expect(state.calls[0]?.status).toBe('unknown');
    const [wait] = recordOnly(nextAction(state));
    expect(wait).toEqual({
      type: 'wait_requested',
      data: { waitId: 'operator:call-1', kind: 'operator', callId: 'call-1' },
    });
  });

  it('leaves the run visibly waiting for the operator', () => {
    const log = interrupted().add('wait_requested', {
      waitId: 'operator:call-1',
      kind: 'operator',
      callId: 'call-1',
    });
    const state = fold(log.events);
    expect(state.status).toBe('waiting');
    expect(state.waiting).toMatchObject({ kind: 'operator', callId: 'call-1' });
    expect(nextAction(state)).toEqual({ kind: 'idle', reason: 'waiting' });
  });

  it('is recorded as done with the operator-given result on `confirm`, then the model decides again', () => {
    const log = interrupted()
      .add('wait_requested', { waitId: 'operator:call-1', kind: 'operator', callId: 'call-1' })
      .add('signal_received', {
        signalId: 's-1',
        name: 'confirm',
        payload: { callId: 'call-1', result: { chargeId: 'ch_1' } },
      });
    const state = fold(log.events);
    expect(state.status).toBe('running');
    const [completed] = recordOnly(nextAction(state));
    expect(completed).toMatchObject({
      type: 'tool_call_completed',
      data: { callId: 'call-1', result: { chargeId: 'ch_1' } },
    });
    log.add('tool_call_completed', (completed as unknown as { data: never }).data);
    const after = fold(log.events);
    expect(after.calls[0]).toMatchObject({ status: 'completed', result: { chargeId: 'ch_1' } });
    expect(nextAction(after)).toEqual({ kind: 'decide' });
  });

  it('is recorded as failed on `skip`, which the model then sees', () => {
    const log = interrupted()
      .add('wait_requested', { waitId: 'operator:call-1', kind: 'operator', callId: 'call-1' })
      .add('signal_received', { signalId: 's-1', name: 'skip' });
    const [failed] = recordOnly(nextAction(fold(log.events)));
    expect(failed).toMatchObject({
      type: 'tool_call_failed',
      data: { error: { code: 'skipped_by_operator' }, retryable: false },
    });
    log.add('tool_call_failed', (failed as unknown as { data: never }).data);
    const after = fold(log.events);
    expect(after.calls[0]?.status).toBe('failed');
    expect(nextAction(after)).toEqual({ kind: 'decide' });
  });

  it('ignores a verdict about another call and other signal names', () => {
    const log = interrupted()
      .add('wait_requested', { waitId: 'operator:call-1', kind: 'operator', callId: 'call-1' })
      .add('signal_received', { signalId: 's-1', name: 'confirm', payload: { callId: 'call-9' } })
      .add('signal_received', { signalId: 's-2', name: 'approve' });
    const state = fold(log.events);
    expect(state.status).toBe('waiting');
    expect(state.calls[0]?.operator).toBeUndefined();
  });
});

describe('a tool whose retry policy fails the run', () => {
  it('fails the run without asking the model when its final failure arrives', () => {
    const log = new RunLog().request().start().think([charge]).intents();
    const { idempotencyKey } = log.intent('call-1');
    const error = { code: 'declined', message: 'card declined', retryable: false };
    log.add('tool_call_failed', {
      callId: 'call-1',
      idempotencyKey,
      error,
      attempt: 3,
      retryable: false,
      failRun: true,
    });
    const [failed] = recordOnly(nextAction(fold(log.events)));
    expect(failed).toMatchObject({
      type: 'run_failed',
      data: { error: { code: 'tool_failed', message: expect.stringMatching(/card declined/) } },
    });
  });

  it('lets the model react when the policy only observes', () => {
    const log = new RunLog().request().start().think([charge]).intents().fail('call-1', false, 3);
    expect(nextAction(fold(log.events))).toEqual({ kind: 'decide' });
  });
});

describe("the operator wait a code agent's run stopped in", () => {
  const reason =
    'non-determinism at step 2 of payer@1 (run run-1): the log recorded a, the code now asks for b';
  function stopped(): RunLog {
    return new RunLog()
      .request()
      .start()
      .add('wait_requested', { waitId: 'operator:code:1', kind: 'operator', reason });
  }

  it('holds the run: nothing is decided while it is open, whatever else is signalled', () => {
    const log = stopped().add('signal_received', { signalId: 's-1', name: 'go' });
    const state = fold(log.events);
    expect(state.status).toBe('waiting');
    expect(state.waiting).toMatchObject({ kind: 'operator', reason });
    expect(nextAction(state)).toEqual({ kind: 'idle', reason: 'waiting' });
  });

  it('is lifted by `retry`: the planner decides again with the code it serves now', () => {
    const log = stopped().add('signal_received', { signalId: 's-1', name: RETRY_SIGNAL });
    const state = fold(log.events);
    expect(state.status).toBe('running');
    expect(state.waits).toEqual([]);
    expect(nextAction(state)).toEqual({ kind: 'decide' });
  });

  it('may open again after a retry when the code still diverges', () => {
    const log = stopped()
      .add('signal_received', { signalId: 's-1', name: RETRY_SIGNAL })
      .add('wait_requested', { waitId: 'operator:code:1', kind: 'operator', reason });
    expect(fold(log.events).status).toBe('waiting');
  });

  it('does not answer an unknown outcome: `retry` leaves the operator wait of a call open', () => {
    const log = interrupted()
      .add('wait_requested', { waitId: 'operator:call-1', kind: 'operator', callId: 'call-1' })
      .add('signal_received', { signalId: 's-1', name: RETRY_SIGNAL });
    const state = fold(log.events);
    expect(state.status).toBe('waiting');
    expect(state.calls[0]?.status).toBe('unknown');
  });
});
