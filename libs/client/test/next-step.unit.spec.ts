import { describe, expect, it } from 'vitest';
import { newEvent, type EventData, type EventType, type RunEvent } from '@dura/contracts';
import { DuraError } from '@dura/contracts';
import { nextStep, verdictFor, waitStep, type VerdictRun } from '../src/index';

function event<T extends EventType>(type: T, data: EventData<T>): RunEvent {
  const draft = newEvent(type, data, {
    id: 'e',
    runId: 'run-1',
    ts: '2026-01-01T00:00:00Z',
    correlationId: 'run-1',
  });
  return { ...draft, seq: 7 };
}

describe('nextStep: what resolves a wait, as a command to copy', () => {
  it('an approval names the call for approve and reject', () => {
    const line = nextStep(event('wait_requested', { waitId: 'w', kind: 'approval', callId: 'call-2' }));
    expect(line).toBe(
      'run run-1 waits for approval of call-2: dura approve run-1 --call call-2  or  dura reject run-1 --call call-2 --reason TEXT',
    );
  });

  it('a signal wait names the signal, and the timeout when there is one', () => {
    const line = nextStep(
      event('wait_requested', {
        waitId: 'w',
        kind: 'signal',
        signal: 'go',
        timeoutAt: '2026-01-02T00:00:00Z',
        onTimeout: 'continue',
      }),
      'npm run dura --',
    );
    expect(line).toBe(
      "run run-1 waits for the signal go (until 2026-01-02T00:00:00Z, then continue): npm run dura -- signal run-1 go --payload '{}'",
    );
  });

  it('a budget stop names the limit and a payload that raises it; the budget wait after it adds nothing', () => {
    const over = nextStep(event('budget_exceeded', { budget: 'steps', limit: 3, used: 3, policy: 'wait' }));
    expect(over).toContain(`dura signal run-1 raise_budget --payload '{"maxSteps":6}'`);
    expect(over).toContain('dura cancel run-1');
    expect(
      nextStep(event('wait_requested', { waitId: 'w', kind: 'budget', signal: 'raise_budget' })),
    ).toBeUndefined();
    expect(
      nextStep(event('budget_exceeded', { budget: 'steps', limit: 3, used: 3, policy: 'fail' })),
    ).toBeUndefined();
    expect(waitStep('run-1', { kind: 'budget' })).toContain('raise_budget');
  });

  it('an operator wait gives confirm and skip for the call', () => {
    const line = nextStep(event('wait_requested', { waitId: 'w', kind: 'operator', callId: 'call-4' }));
    expect(line).toContain(`dura signal run-1 confirm --payload '{"callId":"call-4","result":RESULT}'`);
    expect(line).toContain(`dura signal run-1 skip --payload '{"callId":"call-4"}'`);
  });

  it('a ctx.approve wait gives approve and reject, and the payload that approves (never {})', () => {
    const line = nextStep(
      event('wait_requested', {
        waitId: 'w',
        kind: 'signal',
        signal: 'deploy',
        callId: 'call-3',
        approval: true,
      }),
    );
    expect(line).toBe(
      'run run-1 waits for a verdict (signal deploy): dura approve run-1 --call call-3  or  ' +
        'dura reject run-1 --call call-3 --reason TEXT ' +
        `(or dura signal run-1 deploy --payload '{"approved":true}'; any other payload refuses)`,
    );
    expect(line).not.toContain("'{}'");
  });

  it('a code stop (an operator wait on no call) names retry, not confirm or skip', () => {
    const reason = 'non-determinism at step 2 of payer@1 (run run-1): …';
    const line = nextStep(event('wait_requested', { waitId: 'operator:code:2', kind: 'operator', reason }));
    expect(line).toContain(`stopped for an operator: ${reason}`);
    expect(line).toContain('dura signal run-1 retry');
    expect(line).toContain('dura cancel run-1');
    expect(line).not.toMatch(/confirm|skip/);
  });

  it('a child wait points at the child; events that open no wait say nothing', () => {
    expect(nextStep(event('wait_requested', { waitId: 'w', kind: 'child', childRunId: 'run-2' }))).toContain(
      'dura watch run-2',
    );
    expect(nextStep(event('run_started', {}))).toBeUndefined();
  });
});

describe('verdictFor: the signal that answers the approval a run waits for', () => {
  const run = (over: Partial<VerdictRun>): VerdictRun => ({
    runId: 'run-1',
    status: 'waiting',
    waits: [],
    waiting: null,
    ...over,
  });
  const deploy = { kind: 'signal' as const, signal: 'deploy', callId: 'call-3', approval: true };
  const charge = { kind: 'approval' as const, signal: 'approve', callId: 'call-1' };

  it('answers a ctx.approve wait with its own signal and {"approved": true}', () => {
    const state = run({ waits: [deploy], waiting: deploy });
    expect(verdictFor(state, { approved: true })).toMatchObject({
      name: 'deploy',
      payload: { approved: true },
    });
    expect(verdictFor(state, { approved: false, reason: 'freeze' })).toMatchObject({
      name: 'deploy',
      payload: { approved: false, reason: 'freeze' },
    });
  });

  it('answers a call awaiting approval with approve/reject naming the call; --call picks among several', () => {
    const state = run({ waits: [charge, deploy], waiting: charge });
    expect(verdictFor(state, { approved: true })).toMatchObject({
      name: 'approve',
      payload: { callId: 'call-1', approved: true },
    });
    expect(verdictFor(state, { approved: true }, { callId: 'call-3' })).toMatchObject({ name: 'deploy' });
  });

  it('refuses, naming what the run waits for and the command that answers it', () => {
    const reply = { kind: 'signal' as const, signal: 'reply', callId: 'call-2' };
    const refusal = (state: VerdictRun, callId?: string) => {
      try {
        verdictFor(state, { approved: true }, { callId });
      } catch (err) {
        expect(err).toBeInstanceOf(DuraError);
        expect((err as DuraError).code).toBe('approval_wait_not_found');
        return (err as Error).message;
      }
      throw new Error('verdictFor did not refuse');
    };
    expect(refusal(run({ waits: [reply], waiting: reply }))).toBe(
      "run run-1 waits for no approval; run run-1 waits for the signal reply: dura signal run-1 reply --payload '{}'",
    );
    expect(refusal(run({ status: 'completed' }))).toBe('run run-1 is completed: it waits for no approval');
    expect(refusal(run({ status: 'running' }))).toContain('dura get run-1');
    expect(refusal(run({ waits: [charge], waiting: charge }), 'call-9')).toContain(
      'run run-1 has no approval wait for call call-9; run run-1 waits for approval of call-1: dura approve run-1 --call call-1',
    );
  });
});
