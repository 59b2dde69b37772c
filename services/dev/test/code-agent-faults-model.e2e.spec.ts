// A code agent that asks the model (`ctx.model`, through a fake OpenAI-compatible server on real HTTP) under
// SIGKILL, on real NATS, Postgres and processes: killed after the model answered but before the answer was
// recorded, after a recorded answer's intents, and after the second answer. Every run completes, each charge
// reaches the payment witness once, and the fake server proves a recorded model call is never asked again:
// the only repeat is of an answer the kill lost before it was recorded.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { useFakeLlmServer } from '@dura/testing';
import {
  expectKilledAt,
  logOf,
  useCrashSystem,
  watchToEnd,
  type CrashSystem,
  type FailpointSpec,
} from './crash-harness';
import { witnessedKeys } from './agent-support';

const AGENTS = fileURLToPath(new URL('./fixtures/code-agent-faults-model.ts', import.meta.url));
const PLAN = [101, 102];
const FINAL = 300;

const model = useFakeLlmServer({
  provider: 'openai',
  respond: ({ body }) => {
    const prompt = lastUserText(body);
    if (prompt.startsWith('plan ')) return { kind: 'message', content: JSON.stringify(PLAN) };
    if (prompt.startsWith('judge ')) return { kind: 'message', content: String(FINAL) };
    return { kind: 'status', status: 400, body: { error: { message: `unexpected prompt: ${prompt}` } } };
  },
});

const plannerEnv = (): Record<string, string> => ({ DURA_AGENTS: AGENTS, FAULT_MODEL_URL: model().url });

// Registered after the fake model's beforeAll, so its URL exists when the planner starts.
const crash = useCrashSystem(['planner', 'tool-gateway'], {
  env: (name): Record<string, string> => (name === 'planner' ? plannerEnv() : {}),
});

function lastUserText(body: unknown): string {
  const messages = (body as { messages?: { role: string; content?: unknown }[] }).messages ?? [];
  const user = messages.filter((m) => m.role === 'user').at(-1);
  return typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
}

/** How often the fake model was asked `kind` (`plan` or `judge`) for this run. */
function asked(runId: string, kind: 'plan' | 'judge'): number {
  return model().requests.filter((r) => lastUserText(r.body).startsWith(`${kind} ${runId}`)).length;
}

const thoughts = (log: readonly RunEvent[]) => log.filter((e) => e.type === 'thought');

/** The run completes with the planned charges and the final one, each charged once at the witness. */
async function expectCompleted(sys: CrashSystem, runId: string): Promise<RunEvent[]> {
  const log = await watchToEnd(sys, runId, 180_000);
  expect(log.at(-1)?.type, log.map((e) => e.type).join(', ')).toBe('run_completed');
  const state = fold(log);
  expect(state.output).toMatchObject({ amounts: PLAN, final: { amount: FINAL } });
  const charges = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
  expect(charges.map((c) => c.args['amount'])).toEqual([...PLAN, FINAL]);
  for (const call of charges) expect(sys.witness.effects(call.idempotencyKey)).toBe(1);
  expect(witnessedKeys(sys, runId).sort()).toEqual(charges.map((c) => c.idempotencyKey).sort());
  // Both answers are in the log, with the usage the model reported.
  expect(state.usage.inputTokens).toBeGreaterThan(0);
  return log;
}

async function killedRun(runId: string, failpoint: FailpointSpec): Promise<CrashSystem> {
  const sys = crash();
  await sys.restart('planner', failpoint, plannerEnv());
  await sys.submit({ runId, agent: { kind: 'agent', name: 'code-fault-thinker' }, input: null });
  await expectKilledAt(sys, 'planner', failpoint);
  return sys;
}

/** Restarts the planner without a failpoint, expects the run completed; how often plan and judge were asked. */
async function recovered(sys: CrashSystem, runId: string): Promise<[number, number]> {
  await sys.restart('planner', undefined, plannerEnv());
  await expectCompleted(sys, runId);
  return [asked(runId, 'plan'), asked(runId, 'judge')];
}

describe('a code agent asking the model, under SIGKILL', () => {
  it('runs to completion asking each question once when nothing fails', async () => {
    const sys = crash();
    const runId = 'cfm-clean';
    await sys.submit({ runId, agent: { kind: 'agent', name: 'code-fault-thinker' }, input: null });
    await expectCompleted(sys, runId);
    expect([asked(runId, 'plan'), asked(runId, 'judge')]).toEqual([1, 1]);
  });

  it('killed after the model answered, before the answer was recorded: only that answer is asked again', async () => {
    const runId = 'cfm-after-model-1';
    const sys = await killedRun(runId, 'planner.after-model:1');
    expect(asked(runId, 'plan')).toBe(1);
    expect(thoughts(await logOf(sys, runId))).toHaveLength(0);
    expect(await recovered(sys, runId)).toEqual([2, 1]);
  });

  it('killed after the recorded plan was turned into intents: the plan is never asked again', async () => {
    const runId = 'cfm-after-intent';
    const sys = await killedRun(runId, 'planner.after-intent:1');
    expect(thoughts(await logOf(sys, runId))).toHaveLength(1);
    expect(await recovered(sys, runId)).toEqual([1, 1]);
  });

  it('killed after the second answer, before it was recorded: the recorded plan is not asked again', async () => {
    const runId = 'cfm-after-model-2';
    const sys = await killedRun(runId, 'planner.after-model:2');
    expect(asked(runId, 'judge')).toBe(1);
    expect(thoughts(await logOf(sys, runId))).toHaveLength(1);
    expect(await recovered(sys, runId)).toEqual([1, 2]);
  });
});
