// Code agents on two planner replicas with their continuations kept (the default), on real NATS, Postgres and
// processes: decide tasks of one run land on either replica, so each replica regularly finds the run moved on
// by the other, or loses an append race, and must resume or replay cold without a false non-determinism. One
// replica is also SIGKILLed mid-run. Every run completes, its code's values are the log's (the output is the
// sum of the recorded amounts), and each charge reaches the payment witness once.
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import type { RunEvent } from '@dura/contracts';
import { fold, isTerminal } from '@dura/core';
import { logOf, useCrashSystem, watchToEnd, type CrashSystem } from './crash-harness';
import { eventually } from './system';
import { count, killNow, untilLogged } from './agent-support';
import { LONG_STEPS } from './fixtures/code-agents-long';

const AGENTS = fileURLToPath(new URL('./fixtures/code-agents-long.ts', import.meta.url));

const crash = useCrashSystem(['planner', 'tool-gateway'], {
  env: (name): Record<string, string> => (name === 'planner' ? { DURA_AGENTS: AGENTS } : {}),
});

function submit(sys: CrashSystem, runId: string): Promise<void> {
  return sys.submit({ runId, agent: { kind: 'agent', name: 'code-long-charger' }, input: null });
}

/**
 * Sends the run one signal after another (each once the previous is recorded) until it ends: the replica that
 * records a signal drives the run at once, racing the other replica's drive for the step's decide task.
 */
async function stir(sys: CrashSystem, runId: string): Promise<number> {
  const client = createDuraClient(sys.system);
  for (let k = 0; ; k += 1) {
    if (isTerminal(fold(await logOf(sys, runId)).status)) return k;
    const signalId = `noise-${k}`;
    await client.signal(runId, 'noise', { signalId });
    await eventually(
      async () => {
        const log = await logOf(sys, runId);
        const recorded = log.some((e) => e.type === 'signal_received' && e.data.signalId === signalId);
        return recorded || isTerminal(fold(log).status) ? true : undefined;
      },
      `${runId}: signal ${signalId} recorded`,
      60_000,
    );
  }
}

/** The run completed with every step charged once and an output computed from the log's own values. */
async function expectCompletedOnce(sys: CrashSystem, runId: string): Promise<RunEvent[]> {
  const watched = await watchToEnd(sys, runId, 120_000);
  const log = await logOf(sys, runId);
  const state = fold(log);
  const operator = log.find((e) => e.type === 'wait_requested' && e.data.kind === 'operator');
  expect(operator, JSON.stringify(operator?.data)).toBeUndefined();
  expect(watched.at(-1)?.type).toBe('run_completed');
  expect(state.status).toBe('completed');
  const intents = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
  expect(intents).toHaveLength(LONG_STEPS);
  for (const intent of intents) expect(sys.witness.effects(intent.idempotencyKey)).toBe(1);
  const charged = intents.reduce((sum, intent) => sum + (intent.args['amount'] as number), 0);
  expect(state.output).toEqual({ total: charged });
  const thoughts = log.filter((e) => e.type === 'thought');
  expect(thoughts).toHaveLength(LONG_STEPS + 1);
  return log;
}

describe('code agents on two planner replicas with continuations kept', () => {
  beforeAll(async () => {
    await crash().startExtra('planner', { DURA_AGENTS: AGENTS });
  });

  it('completes runs decided by both replicas, each charge once, with no false non-determinism', async () => {
    const sys = crash();
    const runIds = ['code-replicas-1', 'code-replicas-2', 'code-replicas-3', 'code-replicas-4'];
    await Promise.all(runIds.map((runId) => submit(sys, runId)));
    const signalled = await Promise.all(
      runIds.map(async (runId) => {
        const [sent] = await Promise.all([stir(sys, runId), expectCompletedOnce(sys, runId)]);
        return sent;
      }),
    );
    expect(signalled.every((sent) => sent > 0)).toBe(true);
  });

  it('completes a run when one replica is SIGKILLed mid-run and the other goes on warm or cold', async () => {
    const sys = crash();
    const runId = 'code-replicas-killed';
    await submit(sys, runId);
    await untilLogged(sys, runId, (e) => e.type === 'tool_call_completed', 'the first charge', 60_000);
    await untilLogged(
      sys,
      runId,
      (e) => e.type === 'tool_call_requested' && e.data.step >= 5,
      'the fifth intent',
      60_000,
    );
    await killNow(sys, 'planner');
    const log = await expectCompletedOnce(sys, runId);
    await sys.restart('planner', undefined, { DURA_AGENTS: AGENTS });
    expect(count(log, 'tool_call_completed')).toBe(LONG_STEPS);
  });
});
