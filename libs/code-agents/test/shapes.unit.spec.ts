import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent } from '../src/index';
import { decodeJournal } from '../src/engine';
import { SimRun, TEST_MODEL, types } from '../src/testing';

// The example of docs/agents-as-code.md.
const researcher = defineAgent({
  name: 'researcher',
  version: '1',
  input: z.object({ topic: z.string() }),
  model: { provider: 'openai', model: 'gpt-4o-mini', apiKeyEnv: 'OPENAI_API_KEY' },
  tools: ['web.search', 'notes.write'],
  async run(ctx, { topic }) {
    // one model call, recorded
    const plan = await ctx.model({ system: 'List search queries, comma-separated.', prompt: topic });
    const queries = plan.content.split(',');
    const pages = await Promise.all(
      // one decision, parallel intents
      queries.map((q) => ctx.tool('web.search', { q })),
    );
    await ctx.tool('notes.write', { topic, pages: pages.length });
    return { topic, pages };
  },
});

const world = {
  tools: {
    'web.search': (args: { q?: unknown }) => ({ hit: `page about ${String(args.q)}` }),
    'notes.write': () => ({ saved: true }),
  },
  model: () => 'a,b',
};

describe('plan-and-execute', () => {
  it('given a planning model, when the run is driven, then each step is one thought and the output is returned', async () => {
    const run = new SimRun(researcher, world, 'run-plan', { topic: 'tides' });
    const end = await run.drive();

    expect(end.kind).toBe('finished');
    expect(end.state.status).toBe('completed');
    expect(end.state.output).toEqual({
      topic: 'tides',
      pages: [{ hit: 'page about a' }, { hit: 'page about b' }],
    });
    expect(run.modelCalls).toBe(1);
    expect(run.toolCalls).toEqual(['web.search', 'web.search', 'notes.write']);
    const thoughts = run.events.filter((e) => e.type === 'thought');
    expect(thoughts).toHaveLength(3);
    const first = thoughts[0]!;
    if (first.type !== 'thought') throw new Error('not a thought');
    // The model's answer travels with the first decision: recorded before any intent it led to acts.
    expect(decodeJournal(first.data.content)).toMatchObject([{ k: 'model', a: { content: 'a,b' } }]);
    expect(first.data.usage).toEqual({ inputTokens: 10, outputTokens: 3 });
    expect(first.data.costUsd).toBe(0.001);
    expect(types(run.events).slice(0, 6)).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'tool_call_requested',
      'tool_call_requested',
      'tool_call_completed',
    ]);
  });

  it('given an input its schema refuses, when the run is driven, then it fails naming the agent', async () => {
    const run = new SimRun(researcher, world, 'run-bad', { subject: 'tides' });
    const end = await run.drive();

    expect(end.state.status).toBe('failed');
    expect(end.state.error?.code).toBe('invalid_input');
    expect(end.state.error?.message).toContain('researcher@1');
  });
});

describe('fan-out', () => {
  const fanOut = defineAgent({
    name: 'fan-out',
    version: '1',
    tools: ['web.search'],
    async run(ctx) {
      const results = await Promise.all(['x', 'y', 'z'].map((q) => ctx.tool('web.search', { q })));
      return results;
    },
  });

  it('given Promise.all over three tool calls, when driven, then one decision carries three parallel intents', async () => {
    const run = new SimRun(fanOut, world, 'run-fan');
    const end = await run.drive();

    expect(end.state.status).toBe('completed');
    const decisions = run.events.flatMap((e) => (e.type === 'thought' ? [e.data.decision] : []));
    expect(decisions[0]).toMatchObject({
      kind: 'tool_calls',
      calls: [
        { callId: 'call-1', tool: 'web.search', args: { q: 'x' } },
        { callId: 'call-2', tool: 'web.search', args: { q: 'y' } },
        { callId: 'call-3', tool: 'web.search', args: { q: 'z' } },
      ],
    });
    expect(decisions).toHaveLength(2);
    expect(end.state.output).toEqual([
      { hit: 'page about x' },
      { hit: 'page about y' },
      { hit: 'page about z' },
    ]);
  });
});

describe('evaluator loop', () => {
  const optimizer = defineAgent({
    name: 'optimizer',
    version: '1',
    model: TEST_MODEL,
    tools: ['draft.score'],
    async run(ctx) {
      let draft = 'v0';
      for (let round = 1; round <= 3; round += 1) {
        const scored = (await ctx.tool('draft.score', { draft })) as { score: number };
        if (scored.score >= 0.9) return { draft, rounds: round };
        draft = (await ctx.model({ system: 'Improve the draft.', prompt: draft })).content;
      }
      return { draft, rounds: 3, gaveUp: true };
    },
  });

  it('given drafts that never pass, when driven, then the loop stops at its bound', async () => {
    const run = new SimRun(optimizer, {
      tools: { 'draft.score': () => ({ score: 0.1 }) },
      model: (request) => `${request.messages.at(-1)?.content ?? ''}+`,
    });
    const end = await run.drive();

    expect(end.state.output).toEqual({ draft: 'v0+++', rounds: 3, gaveUp: true });
    expect(run.modelCalls).toBe(3);
    expect(run.toolCalls).toHaveLength(3);
  });

  it('given a draft that passes in round two, when driven, then the loop ends there', async () => {
    const run = new SimRun(optimizer, {
      tools: { 'draft.score': (args) => ({ score: args.draft === 'v0+' ? 0.95 : 0.2 }) },
      model: (request) => `${request.messages.at(-1)?.content ?? ''}+`,
    });
    const end = await run.drive();

    expect(end.state.output).toEqual({ draft: 'v0+', rounds: 2 });
    expect(run.modelCalls).toBe(1);
  });
});
