import { describe, expect, it } from 'vitest';
import { newEvent, type EventData, type EventType, type RunEvent } from '@dura/contracts';
import { nextStep, waitStep } from '../src/index';

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

  it('a child wait points at the child; events that open no wait say nothing', () => {
    expect(nextStep(event('wait_requested', { waitId: 'w', kind: 'child', childRunId: 'run-2' }))).toContain(
      'dura watch run-2',
    );
    expect(nextStep(event('run_started', {}))).toBeUndefined();
  });
});
