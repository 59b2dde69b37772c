import { describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import { DeadLetterSchema, STREAMS, type RunEvent, type ScriptedStep } from '@dura/contracts';
import { fold, idempotencyKey, OUTCOME_UNKNOWN } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { eventually, storedMessages, testEvent } from './support';
import { usePlanner } from './planner-harness';

const infra = useTestInfra({ database: false });
// This planner keeps its default stream options (the streams themselves are ensured with the test ones).
const env = usePlanner(infra, { streams: undefined });

/** A two-step run whose first call, an unsafe deploy, was interrupted: the gateway reported its outcome unknown. */
async function interruptedRun(runId: string): Promise<void> {
  const steps: ScriptedStep[] = [
    { tool: 'demo.deploy', args: { imageTag: 'web:1', environment: 'production' } },
    { tool: 'demo.notify', args: { channel: '#ops', message: 'deployed' } },
  ];
  const step1 = steps[0]!;
  const key = idempotencyKey({ runId, step: 1, tool: step1.tool, args: step1.args });
  const error = {
    code: OUTCOME_UNKNOWN,
    message: 'demo.deploy is unsafe and attempt 1 was interrupted',
    retryable: false,
  };
  const events = [
    testEvent(runId, 'run_requested', { request: { v: 1, runId, agent: { kind: 'scripted', steps } } }, 1),
    testEvent(runId, 'run_started', {}, 2),
    testEvent(
      runId,
      'thought',
      {
        step: 0,
        model: { id: 'scripted', promptVersion: '1' },
        decision: { kind: 'tool_calls', calls: [{ callId: 'call-1', ...step1 }] },
        usage: { inputTokens: 0, outputTokens: 0 },
        finishReason: 'tool_calls',
      },
      3,
    ),
    testEvent(runId, 'tool_call_requested', { callId: 'call-1', step: 1, ...step1, idempotencyKey: key }, 4),
    testEvent(
      runId,
      'tool_call_failed',
      { callId: 'call-1', idempotencyKey: key, error, attempt: 1, retryable: false },
      5,
    ),
  ];
  await env.setup.store.append(runId, events, { expectedSeq: 0 });
}

async function waitingForOperator(runId: string) {
  await env.planner.driver.drive(runId);
  const state = fold(await env.setup.store.read(runId));
  expect(state.status).toBe('waiting');
  expect(state.waiting).toMatchObject({ kind: 'operator', callId: 'call-1' });
  expect(state.calls[0]?.status).toBe('unknown');
}

describe('an unsafe call with an unknown outcome', () => {
  it('waits for an operator, and `confirm` resumes the run with the given result without running the call', async () => {
    const runId = 'op-confirm';
    await interruptedRun(runId);
    await waitingForOperator(runId);
    const client = createDuraClient(env.setup);
    await client.signal(runId, 'confirm', {
      payload: { callId: 'call-1', result: { deploymentId: 'dep-by-hand' } },
    });
    const state = await eventually(async () => {
      const s = await client.getRun(runId);
      return s.steps === 2 ? s : undefined;
    }, 'the run to move past the confirmed call');
    expect(state.calls[0]).toMatchObject({ status: 'completed', result: { deploymentId: 'dep-by-hand' } });
    expect(state.calls[1]).toMatchObject({ tool: 'demo.notify', status: 'pending' });
    const events: RunEvent[] = await env.setup.store.read(runId);
    expect(events.filter((e) => e.type === 'tool_call_requested').map((e) => e.data.callId)).toEqual([
      'call-1',
      'call-2',
    ]);
  });

  it('`skip` records the call as failed, and the scripted model fails the run', async () => {
    const runId = 'op-skip';
    await interruptedRun(runId);
    await waitingForOperator(runId);
    const client = createDuraClient(env.setup);
    const sent = await client.signal(runId, 'skip', { signalId: 'skip-1' });
    expect((await client.signal(runId, 'skip', { signalId: 'skip-1' })).duplicate).toBe(true);
    const state = await eventually(async () => {
      const s = await client.getRun(runId);
      return s.status === 'failed' ? s : undefined;
    }, 'the run to fail after the skip');
    expect(sent.signalId).toBe('skip-1');
    expect(state.calls[0]).toMatchObject({ status: 'failed', error: { code: 'skipped_by_operator' } });
    expect(state.signals).toHaveLength(1);
  });

  it('a signal for a run that does not exist is dead-lettered with the reason', async () => {
    await createDuraClient(env.setup).signal('no-such-run', 'confirm');
    const letters = await eventually(async () => {
      const stored = await storedMessages(env.setup.jsm, STREAMS.deadLetters, 'dura.dlq.signals');
      return stored.length > 0 ? stored.map((m) => DeadLetterSchema.parse(m.json())) : undefined;
    }, 'a dead letter for the signal');
    expect(letters[0]?.error.code).toBe('run_not_found');
  });
});
