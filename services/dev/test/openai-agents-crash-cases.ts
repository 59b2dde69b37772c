// The crash points of an OpenAI Agents SDK agent (fixtures/openai-agents-agents.ts: triage hands off to a
// shopper with three Dura tools, pay.unsafe approved first), registered by openai-agents-crash.e2e.spec.ts
// (separate services) and openai-agents-crash-worker.soak.spec.ts (a worker): SIGKILL after the model
// answered but before the answer was recorded, after a recorded answer's intents, while the model's answer
// streams, and while the run waits for the approval. Every run completes, the fake provider is asked each
// recorded call once (only answers the kill lost are asked again), each charge reaches the witness once, the
// handoff is marked on the run's step, and `dura replay` finds no divergence.
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { decodeJournal } from '@dura/code-agents/engine';
import { useFakeLlmServer, type FakeLlmReply, type FakeLlmServer } from '@dura/testing';
import { expectKilledAt, logOf, watchToEnd, type CrashSystem, type FailpointSpec } from './crash-harness';
import { killNow, witnessedKeys } from './agent-support';
import { dura, eventually } from './system';

type Decider = 'planner' | 'worker';
export const AGENTS_FIXTURE = fileURLToPath(new URL('./fixtures/openai-agents-agents.ts', import.meta.url));
/** A charge may take 10 s before it times out, so a busy machine does not turn a slow charge into a failure. */
export const PATIENT_TOOLS_ENV = { WITNESS_TOOL_TIMEOUT_MS: '10000' };

/** The model's answer by turn (tool results so far): the handoff, then one charge a turn, then the text. */
const TURNS: FakeLlmReply[] = [
  { kind: 'message', content: 'turn 0', toolCalls: [{ name: 'transfer_to_shopper', arguments: {} }] },
  { kind: 'message', content: 'turn 1', toolCalls: [{ name: 'pay_charge', arguments: { amount: 201 } }] },
  { kind: 'message', content: 'turn 2', toolCalls: [{ name: 'pay_checked', arguments: { amount: 202 } }] },
  { kind: 'message', content: 'turn 3', toolCalls: [{ name: 'pay_unsafe', arguments: { amount: 203 } }] },
];
const CHARGES = [201, 202, 203];
const answerText = (runId: string) => `Bought everything for ${runId}: three charges.`;

export const EXAMPLE_QUESTION = 'How does durable execution keep side effects from running twice?';
export const EXAMPLE_ANSWER = 'Record each step (n2), key each effect (n3).';

/** The docs' help desk: the handoff, one search, the answer. */
function helpDeskTurn(turn: number): FakeLlmReply {
  if (turn === 0) return { kind: 'message', toolCalls: [{ name: 'transfer_to_researcher', arguments: {} }] };
  if (turn === 1)
    return {
      kind: 'message',
      toolCalls: [{ name: 'research_search', arguments: { query: 'durable execution' } }],
    };
  return { kind: 'message', content: EXAMPLE_ANSWER };
}

/** The run (from the first user text) and the turn (tool results so far) of a Chat Completions request. */
function promptOf(body: unknown): { runId: string; turn: number } {
  const messages = (body as { messages?: { role: string; content?: unknown }[] }).messages ?? [];
  const first = messages.find((m) => m.role === 'user')?.content;
  const text = typeof first === 'string' ? first : JSON.stringify(first ?? '');
  return { runId: text.replace(/^shop /, ''), turn: messages.filter((m) => m.role === 'tool').length };
}

export interface AgentsModels {
  fake: FakeLlmServer;
  /** How often each of the five turns of `runId` was asked. */
  asked(runId: string): number[];
  /** Streams the first answer to turn `turn` of `runId` a piece every `ms`. */
  slow(runId: string, turn: number, ms: number): void;
  env(): Record<string, string>;
}

/** Registers beforeAll/afterAll (before useCrashSystem, so the URL exists when the decider starts). */
export function useAgentsModels(): () => AgentsModels {
  const slow = new Map<string, number>();
  let current: AgentsModels | undefined;
  const fake = useFakeLlmServer({
    provider: 'openai',
    respond: ({ body }): FakeLlmReply => {
      const { runId, turn } = promptOf(body);
      if (runId === EXAMPLE_QUESTION) return helpDeskTurn(turn);
      const ms = slow.get(`${runId}#${turn}`);
      slow.delete(`${runId}#${turn}`);
      const extra = {
        usage: { inputTokens: 50 + turn, outputTokens: 7 },
        ...(ms ? { pieceDelayMs: ms } : {}),
      };
      if (turn === 4) return { kind: 'message', content: answerText(runId), ...extra };
      const reply = TURNS[turn];
      return reply
        ? { ...reply, ...extra }
        : { kind: 'status', status: 400, body: { error: { message: `turn ${turn}?` } } };
    },
  });
  beforeAll(() => {
    current = {
      fake: fake(),
      asked: (runId) =>
        [0, 1, 2, 3, 4].map(
          (turn) =>
            fake().requests.filter((r) => {
              const p = promptOf(r.body);
              return p.runId === runId && p.turn === turn;
            }).length,
        ),
      slow: (runId, turn, ms) => slow.set(`${runId}#${turn}`, ms),
      env: () => ({
        DURA_AGENTS: AGENTS_FIXTURE,
        AGENTS_OPENAI_URL: fake().url,
        RESEARCH_MODEL_URL: fake().url,
      }),
    };
  });
  return () => {
    if (!current) throw new Error('useAgentsModels(): only available inside tests, after beforeAll');
    return current;
  };
}

const approvalWaiting = async (sys: CrashSystem, runId: string) =>
  (await logOf(sys, runId)).some(
    (e) => e.type === 'wait_requested' && e.data.signal === 'approve.pay_unsafe',
  ) || undefined;

/**
 * Approves pay.unsafe with `dura approve` once the run waits for it; then the run completes with the
 * model's answer; each charge made once at the witness under its key; the handoff marked; every model
 * answer's budget reserved first; and `dura replay` finds no divergence.
 */
export async function expectShopped(sys: CrashSystem, runId: string): Promise<RunEvent[]> {
  await eventually(() => approvalWaiting(sys, runId), `${runId}: waiting for the approval`, 90_000);
  const approved = await dura(sys, ['approve', runId]);
  expect(approved.code, approved.output).toBe(0);
  const log = await watchToEnd(sys, runId, 120_000);
  const told = log.map((e) =>
    e.type === 'tool_call_failed' ? `${e.type} ${JSON.stringify(e.data)}` : e.type,
  );
  expect(log.at(-1)?.type, told.join(', ')).toBe('run_completed');
  expect(fold(log).output).toEqual({ text: answerText(runId), agent: 'shopper' });
  const charges = log.flatMap((e) =>
    e.type === 'tool_call_requested' && e.data.tool.startsWith('pay.') ? [e.data] : [],
  );
  expect(charges.map((c) => c.args['amount'])).toEqual(CHARGES);
  for (const call of charges) expect(sys.witness.effects(call.idempotencyKey), call.tool).toBe(1);
  expect(witnessedKeys(sys, runId).sort()).toEqual(charges.map((c) => c.idempotencyKey).sort());
  const entries = log.flatMap((e) => (e.type === 'thought' ? decodeJournal(e.data.content) : []));
  expect(entries.filter((e) => e.k === 'mark')).toEqual([{ k: 'mark', v: 'handoff: triage → shopper' }]);
  expect(entries.filter((e) => e.k === 'model')).toHaveLength(5);
  // A budget reserved before each step that asked a model (the handoff's step asked two).
  const modelSteps = log.filter(
    (e) => e.type === 'thought' && decodeJournal(e.data.content).some((entry) => entry.k === 'model'),
  );
  expect(modelSteps).toHaveLength(4);
  expect(log.filter((e) => e.type === 'budget_reserved').length).toBeGreaterThanOrEqual(4);

  const replay = await dura(sys, ['replay', runId, '--agents', AGENTS_FIXTURE]);
  expect(replay.output).toContain(`no divergence (${(await logOf(sys, runId)).length} events checked)`);
  expect(replay.code).toBe(0);
  return log;
}

export function agentsCrashCases(
  decider: Decider,
  crash: () => CrashSystem,
  models: () => AgentsModels,
): void {
  const submit = (sys: CrashSystem, runId: string) =>
    sys.submit({ runId, agent: { kind: 'agent', name: 'agents-shopper' }, input: null });
  const restart = (sys: CrashSystem) => sys.restart(decider, undefined, models().env());

  /** Restarts the decider without a failpoint and expects the run shopped: how often each turn was asked. */
  async function recovered(sys: CrashSystem, runId: string): Promise<number[]> {
    await restart(sys);
    await expectShopped(sys, runId);
    return models().asked(runId);
  }

  /** Arms `failpoint` in the decider, submits the run and expects the decider killed there. */
  async function killedAt(sys: CrashSystem, runId: string, failpoint: FailpointSpec): Promise<void> {
    await sys.restart(decider, failpoint, models().env());
    await submit(sys, runId);
    await expectKilledAt(sys, decider, failpoint);
  }

  it('killed after the model answered, before the answer was recorded: only the unrecorded calls are asked again', async () => {
    const sys = crash();
    const runId = `agents-${decider}-after-model`;
    // Before the third step's thought: turns 0 and 1 (the handoff, pay.charge) and turn 2 are recorded,
    // turn 3's answer (pay.unsafe, the call to approve) is not.
    await killedAt(sys, runId, 'planner.after-model:3');
    expect(models().asked(runId)).toEqual([1, 1, 1, 1, 0]);

    expect(await recovered(sys, runId)).toEqual([1, 1, 1, 2, 1]);
  });

  it('killed after a recorded answer’s intents: no call is asked again', async () => {
    const sys = crash();
    const runId = `agents-${decider}-after-intent`;
    await killedAt(sys, runId, 'planner.after-intent:2');

    expect(await recovered(sys, runId)).toEqual([1, 1, 1, 1, 1]);
  });

  it('killed while the model’s answer streams: the unrecorded stream is asked again, nothing else', async () => {
    const sys = crash();
    const runId = `agents-${decider}-mid-stream`;
    await restart(sys);
    models().slow(runId, 2, 1_000);
    await submit(sys, runId);
    await eventually(
      () => Promise.resolve(models().asked(runId)[2] === 1 || undefined),
      `${runId}: turn 2 streaming`,
      60_000,
    );
    await killNow(sys, decider);

    expect(await recovered(sys, runId)).toEqual([1, 1, 2, 1, 1]);
  });

  it('killed while the run waits for the approval: approved after the restart, it goes on', async () => {
    const sys = crash();
    const runId = `agents-${decider}-awaiting-approval`;
    await restart(sys);
    await submit(sys, runId);
    await eventually(() => approvalWaiting(sys, runId), `${runId}: waiting for the approval`, 90_000);
    await killNow(sys, decider);

    expect(await recovered(sys, runId)).toEqual([1, 1, 1, 1, 1]);
  });
}
