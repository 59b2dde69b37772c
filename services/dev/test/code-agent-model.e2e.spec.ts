// ctx.model served by the planner on real NATS, Postgres and processes, through the LLM adapters against a
// fake OpenAI-compatible server. Each answer is recorded in its step's thought with usage and cost, after the
// call's worst case was reserved (`budget_reserved`), and the text is streamed to the run's live subject. A
// planner SIGKILLed after the model answered and before the thought was appended (planner.after-model)
// asks again only the call that was not recorded: the server sees each recorded call exactly once. One
// killed after the reservation (planner.after-reserve) reuses it on restart instead of reserving again.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJournal } from '@dura/code-agents/engine';
import type { RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { readStoredTokens } from '@dura/event-store';
import { eventually, startFakeLlmServer, type FakeLlmReply, type FakeLlmServer } from '@dura/testing';
import { expectKilledAt, logOf, useCrashSystem, watchToEnd } from './crash-harness';
import { count, witnessedKeys, type WireBody } from './agent-support';

const AGENTS = fileURLToPath(new URL('./fixtures/code-model-agents.ts', import.meta.url));
const USAGE = { inputTokens: 30, outputTokens: 10 };
const COST_PER_CALL = 0.04; // 40 tokens at $0.001

let llm: FakeLlmServer | undefined;
const lastUser = (body: WireBody) => body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';

/** The fake model: a plan of two amounts, a summary, or (for the loop) one pay.checked call then an answer. */
function reply(body: WireBody): FakeLlmReply {
  const prompt = lastUser(body);
  if (prompt.startsWith('plan ')) return { kind: 'message', content: '100,200', usage: USAGE };
  if (prompt.startsWith('summarize '))
    return { kind: 'message', content: 'charged twice, all good', usage: USAGE };
  if (prompt.startsWith('loop ')) {
    const results = body.messages.filter((m) => m.role === 'tool');
    if (results.length === 0)
      return {
        kind: 'message',
        toolCalls: [{ name: 'pay__checked', arguments: { amount: 5 } }],
        usage: USAGE,
      };
    return { kind: 'message', content: 'paid 5', usage: USAGE };
  }
  return { kind: 'status', status: 400, body: { error: { message: `no answer for ${prompt}` } } };
}

beforeAll(async () => {
  llm = await startFakeLlmServer({ provider: 'openai', respond: ({ body }) => reply(body as WireBody) });
});
afterAll(async () => {
  await llm?.close();
});

const env = (): Record<string, string> => ({ DURA_AGENTS: AGENTS, CODE_MODEL_URL: llm?.url ?? '' });
const crash = useCrashSystem(['planner', 'tool-gateway'], {
  env: (name): Record<string, string> => (name === 'planner' ? env() : {}),
});

/** The wire requests of the run about `topic`, by what they asked. */
function asked(topic: string): string[] {
  return (llm?.requests ?? [])
    .map((r) => lastUser(r.body as WireBody))
    .filter((prompt) => prompt.includes(topic));
}

const thoughtsOf = (log: RunEvent[]) => log.flatMap((e) => (e.type === 'thought' ? [e] : []));
const modelEntries = (log: RunEvent[]) =>
  thoughtsOf(log).flatMap((e) => decodeJournal(e.data.content).filter((entry) => entry.k === 'model'));

describe('ctx.model served by the planner', () => {
  it('records each answer in its thought with usage and cost, reserved before, streamed live, asked once', async () => {
    const sys = crash();
    const runId = 'code-model-1';
    {
      await sys.submit({ runId, agent: { kind: 'agent', name: 'code-model-planner' }, input: 'alpha' });
      const log = await watchToEnd(sys, runId);
      expect(log.at(-1)?.type).toBe('run_completed');
      expect(fold(log).output).toEqual({ summary: 'charged twice, all good', amounts: [100, 200] });

      const thoughts = thoughtsOf(log);
      expect(thoughts.map((t) => t.data.decision.kind)).toEqual(['tool_calls', 'complete']);
      for (const thought of thoughts) {
        expect(thought.data.usage).toEqual(USAGE);
        expect(thought.data.costUsd).toBeCloseTo(COST_PER_CALL, 10);
        expect(thought.data.model.id).toBe('fake-1');
      }
      expect(modelEntries(log).map((entry) => entry.k === 'model' && entry.a.content)).toEqual([
        '100,200',
        'charged twice, all good',
      ]);
      // Each thought with a model answer follows its own reservation, made before the model was asked.
      const types = log.map((e) => e.type);
      expect(count(log, 'budget_reserved')).toBe(2);
      for (const thought of thoughts) {
        const before = types.lastIndexOf('budget_reserved', log.indexOf(thought));
        expect(before, `a reservation before the thought at seq ${thought.seq}`).toBeGreaterThan(-1);
        expect(types.slice(before + 1, log.indexOf(thought))).not.toContain('thought');
      }
      // The fake server was asked exactly once per recorded call.
      expect(asked('alpha')).toEqual(['plan alpha', 'summarize alpha: 2 charges']);
      expect(witnessedKeys(sys, runId)).toHaveLength(2);
      // Each call's answer streamed to DURA_TOKENS as it came, tagged with its decision and call.
      await eventually(async () => {
        const texts = new Map<string, string>();
        for (const t of await readStoredTokens(sys.system.jsm, runId))
          texts.set(`${t.decision}.${t.call}`, (texts.get(`${t.decision}.${t.call}`) ?? '') + t.delta);
        const want = new Map([
          ['0.0', '100,200'],
          ['1.0', 'charged twice, all good'],
        ]);
        return JSON.stringify([...texts]) === JSON.stringify([...want]) ? texts : undefined;
      }, 'the streamed text of both calls in DURA_TOKENS');
    }
  });

  it('killed after the model answered, before the record: re-asks only the unrecorded call, never a recorded one', async () => {
    const sys = crash();
    const runId = 'code-model-killed';
    // The second thought of this planner process is the run's second step: its model call is answered, then
    // the planner dies before appending it. The first step (its plan) is recorded by then.
    await sys.restart('planner', 'planner.after-model:2', env());
    await sys.submit({ runId, agent: { kind: 'agent', name: 'code-model-planner' }, input: 'bravo' });
    await expectKilledAt(sys, 'planner', 'planner.after-model:2');
    const before = await logOf(sys, runId);
    expect(thoughtsOf(before)).toHaveLength(1);
    expect(asked('bravo')).toEqual(['plan bravo', 'summarize bravo: 2 charges']);

    await sys.restart('planner', undefined, env());
    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_completed');
    // The recorded plan was never asked again; the unrecorded summary was asked once more, then recorded.
    expect(asked('bravo')).toEqual([
      'plan bravo',
      'summarize bravo: 2 charges',
      'summarize bravo: 2 charges',
    ]);
    expect(modelEntries(log)).toHaveLength(2);
    // The reservation made before the lost answer is reused: one per step, none twice.
    expect(count(log, 'budget_reserved')).toBe(2);
    const keys = witnessedKeys(sys, runId);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
    expect(fold(log).budget.costUsd).toBeCloseTo(2 * COST_PER_CALL, 10);
  });

  it('killed after the reservation, before the model was asked: reuses it and asks each call once', async () => {
    const sys = crash();
    const runId = 'code-model-reserved';
    await sys.restart('planner', 'planner.after-reserve:1', env());
    await sys.submit({ runId, agent: { kind: 'agent', name: 'code-model-planner' }, input: 'delta' });
    await expectKilledAt(sys, 'planner', 'planner.after-reserve:1');
    const before = await logOf(sys, runId);
    expect(before.at(-1)?.type).toBe('budget_reserved');
    expect(asked('delta')).toEqual([]);

    await sys.restart('planner', undefined, env());
    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_completed');
    expect(asked('delta')).toEqual(['plan delta', 'summarize delta: 2 charges']);
    expect(count(log, 'budget_reserved')).toBe(2);
    expect(witnessedKeys(sys, runId)).toHaveLength(2);
  });

  it('runs ctx.loop: the model calls a tool through the gateway, then answers; every turn recorded once', async () => {
    const sys = crash();
    const runId = 'code-model-loop';
    await sys.submit({ runId, agent: { kind: 'agent', name: 'code-model-looper' }, input: 'charlie' });
    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_completed');
    expect(fold(log).output).toEqual({ text: 'paid 5', turns: 2, finished: true });
    const calls = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
    expect(calls.map((c) => [c.tool, c.args])).toEqual([['pay.checked', { amount: 5 }]]);
    expect(witnessedKeys(sys, runId)).toHaveLength(1);
    // The tool's JSON schema went to the model; its result came back as a tool message.
    const bodies = (llm?.requests ?? []).map(
      (r) => r.body as WireBody & { tools?: { function: { name: string } }[] },
    );
    const mine = bodies.filter((b) => lastUser(b) === 'loop charlie');
    expect(mine).toHaveLength(2);
    expect(mine[0]?.tools?.map((t) => t.function.name)).toEqual(['pay__checked']);
    expect(mine[1]?.messages.filter((m) => m.role === 'tool')).toHaveLength(1);
    expect(modelEntries(log)).toHaveLength(2);
  });
});
