import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, type AnyCodeAgent } from '@dura/code-agents';
import { decodeJournal } from '@dura/code-agents/engine';
import type { BudgetLimits, RunEvent, RunRequest } from '@dura/contracts';
import { evolve, initialRunState, nextAction, type RunState } from '@dura/core';
import { runEvent } from '@dura/core/testing';
import { defineTool, ToolRegistry } from '@dura/tools';
import {
  createScriptedModel,
  plannerStep,
  withCodeAgents,
  type ChatProvider,
  type ChatRequest,
} from '../src/index';
import { simulateRun } from '../src/testing';
import { MODEL, twiceAgent } from './code-agent-support';

// ctx.model and ctx.loop served through the planner's model port, with an in-process provider in place of
// the HTTP adapters: what is asked, what is recorded, and what the budgets see.

const PRICES = { 'fake-1': { inputPerMTokUsd: 1000, outputPerMTokUsd: 1000 } }; // $0.001 a token

type Reply = {
  content?: string;
  toolCalls?: { id: string; name: string; arguments: Record<string, never> }[];
};

/** A provider that answers from `replies` in turn and keeps every request it got. */
function fakeProvider(replies: (request: ChatRequest) => Reply) {
  const asked: ChatRequest[] = [];
  const provider: ChatProvider = {
    provider: 'openai',
    chat(request) {
      asked.push(request);
      const reply = replies(request);
      for (const word of (reply.content ?? '').split(' ')) request.onDelta?.(word);
      return Promise.resolve({
        ...(reply.content === undefined ? {} : { content: reply.content }),
        toolCalls: reply.toolCalls ?? [],
        usage: { inputTokens: 20, outputTokens: 5 },
        finishReason: reply.toolCalls ? 'tool_calls' : 'stop',
        modelId: 'fake-1-2026',
      });
    },
  };
  return { provider, asked };
}

const search = defineTool({
  name: 'web.search',
  description: 'searches the web',
  input: z.object({ q: z.string() }),
  safety: 'idempotent',
  execute: () => Promise.resolve(null),
});

function served(agents: AnyCodeAgent[], provider: ChatProvider) {
  return withCodeAgents({
    agents,
    base: createScriptedModel(),
    tools: new ToolRegistry([search]),
    prices: PRICES,
    providerFor: () => provider,
  });
}

function request(runId: string, name: string, budget?: BudgetLimits): RunRequest & { runId: string } {
  return { v: 1, runId, agent: { kind: 'agent', name }, ...(budget ? { budget } : {}) };
}

const planner = defineAgent({
  name: 'planner',
  version: '1',
  model: MODEL,
  tools: ['web.search'],
  async run(ctx, topic: string) {
    const plan = await ctx.model({ system: 'List queries, comma-separated.', prompt: topic });
    const pages = await Promise.all(plan.content.split(',').map((q) => ctx.tool('web.search', { q })));
    const summary = await ctx.model({ prompt: `summarize ${pages.length} pages` });
    return summary.content;
  },
});

describe('ctx.model served by the planner', () => {
  it('given a code agent asking the model, when the run is driven, then each answer is recorded in its step with usage and cost', async () => {
    const { provider, asked } = fakeProvider((r) => ({
      content: r.messages.at(-1)?.content?.startsWith('summarize') ? 'done' : 'a,b',
    }));
    const run = await simulateRun(
      { ...request('m-1', 'planner'), input: 'rust' },
      served([planner], provider),
    );

    expect(run.state.status).toBe('completed');
    expect(run.state.output).toBe('done');
    expect(asked).toHaveLength(2);
    expect(asked[0]).toMatchObject({
      model: 'fake-1',
      maxTokens: 100,
      tools: [],
      messages: [
        { role: 'system', content: 'List queries, comma-separated.' },
        { role: 'user', content: 'rust' },
      ],
    });
    const thoughts = run.events.flatMap((e) => (e.type === 'thought' ? [e.data] : []));
    expect(thoughts).toHaveLength(2);
    expect(thoughts[0]).toMatchObject({
      usage: { inputTokens: 20, outputTokens: 5 },
      model: { id: 'fake-1-2026', promptVersion: '1' },
      costUsd: 0.025,
      decision: { kind: 'tool_calls' },
    });
    expect(decodeJournal(thoughts[0]?.content)).toMatchObject([
      { k: 'model', a: { content: 'a,b', usage: { inputTokens: 20, outputTokens: 5 }, costUsd: 0.025 } },
    ]);
    expect(run.state.budget.costUsd).toBeCloseTo(0.05, 10);
  });

  it('given a metered run, when the code asks the model, then the worst case is reserved before it is asked, once per step', async () => {
    const twice = twiceAgent();
    const { provider, asked } = fakeProvider(() => ({ content: 'ok' }));
    const run = await simulateRun(request('m-2', 'twice', { maxCostUsd: 1 }), served([twice], provider));

    expect(run.state.status).toBe('completed');
    expect(asked).toHaveLength(2);
    const types = run.events.map((e) => e.type);
    expect(types.filter((t) => t === 'budget_reserved')).toHaveLength(1);
    expect(types.indexOf('budget_reserved')).toBeLessThan(types.indexOf('thought'));
    const reserved = run.events.find((e) => e.type === 'budget_reserved');
    // The first call's estimated input (a few tokens) plus its maxTokens of 100, at $0.001 a token.
    const { tokens, costUsd } = reserved?.data as { tokens: number; costUsd: number };
    expect(tokens).toBeGreaterThan(100);
    expect(costUsd).toBeCloseTo(tokens / 1000, 10);
  });

  it('given a cost limit below the call worst case, when the code asks the model, then the run fails over budget and nothing is asked', async () => {
    const { provider, asked } = fakeProvider(() => ({ content: 'a' }));
    const run = await simulateRun(
      { ...request('m-3', 'planner', { maxCostUsd: 0.05 }), input: 'x' },
      served([planner], provider),
    );

    expect(asked).toHaveLength(0);
    expect(run.state.status).toBe('failed');
    expect(run.events.map((e) => e.type)).toContain('budget_exceeded');
    expect(run.events.map((e) => e.type)).not.toContain('budget_reserved');
  });

  it('given a wait policy, when a call would pass the cost limit, then the run waits without asking and goes on after raise_budget', async () => {
    const patient = defineAgent({ ...planner, name: 'patient', onBudgetExceeded: 'wait' });
    const { provider, asked } = fakeProvider(() => ({ content: 'a' }));
    let raised = false;
    const run = await simulateRun(
      { ...request('m-7', 'patient', { maxCostUsd: 0.05 }), input: 'x' },
      served([patient], provider),
      {
        before: (state) => {
          if (state.waiting?.kind !== 'budget' || raised) return [];
          raised = true;
          expect(asked).toHaveLength(0);
          const payload = { maxCostUsd: 5 };
          return [{ type: 'signal_received', data: { signalId: 'raise-1', name: 'raise_budget', payload } }];
        },
      },
    );

    expect(raised).toBe(true);
    expect(run.state.status).toBe('completed');
    expect(asked).toHaveLength(2);
    const types = run.events.map((e) => e.type);
    expect(types.indexOf('budget_exceeded')).toBeLessThan(types.indexOf('budget_reserved'));
  });

  it('given an answer not recorded (a crash before the thought), when the step is decided again, then only that call is asked again', async () => {
    const { provider, asked } = fakeProvider((r) => ({
      content: r.messages.at(-1)?.content?.startsWith('summarize') ? 'done' : 'a',
    }));
    const model = served([planner], provider);
    let state: RunState = initialRunState();
    const events: RunEvent[] = [];
    const add = (type: string, data: unknown) => {
      const event = runEvent(type as never, data as never, {
        seq: events.length + 1,
        runId: 'm-4',
      }) as RunEvent;
      events.push(event);
      state = evolve(state, event);
    };
    add('run_requested', { request: { ...request('m-4', 'planner'), input: 'x' } });
    let lost = false;
    for (let guard = 0; guard < 50 && nextAction(state).kind !== 'idle'; guard += 1) {
      const action = nextAction(state);
      if (action.kind === 'dispatch') {
        for (const call of action.calls)
          add('tool_call_completed', {
            callId: call.callId,
            idempotencyKey: call.idempotencyKey,
            result: 'p',
            attempt: 1,
            deduped: false,
            durationMs: 1,
          });
        continue;
      }
      const step = await plannerStep(state, action, { model, now: new Date() });
      // The planner dies after the second model answer, before its thought is appended.
      if (step.kind === 'thought' && state.turns.length === 1 && !lost) {
        lost = true;
        continue;
      }
      if (step.kind !== 'none') for (const draft of step.drafts) add(draft.type, draft.data);
    }

    expect(state.status).toBe('completed');
    expect(asked.map((r) => r.messages.at(-1)?.content)).toEqual([
      'x',
      'summarize 1 pages',
      'summarize 1 pages',
    ]);
  });

  it('given an answer the journal cannot hold, when asked, then the run fails with the reason instead of recording it', async () => {
    const broken: ChatProvider = {
      provider: 'openai',
      chat: () =>
        Promise.resolve({
          content: 'x',
          toolCalls: [],
          usage: { inputTokens: -1, outputTokens: 1 },
          finishReason: 'stop',
          modelId: 'fake-1',
        }),
    };
    const echo = defineAgent({
      name: 'echo',
      version: '1',
      model: MODEL,
      tools: [],
      run: async (ctx) => (await ctx.model({ prompt: 'say' })).content,
    });
    const run = await simulateRun(request('m-6', 'echo'), served([echo], broken));

    expect(run.state.status).toBe('failed');
    expect(run.state.error?.code).toBe('model_bad_response');
    expect(run.state.error?.message).toMatch(/cannot be recorded/);
  });

  it('given a live port, when the model answers, then its text is streamed as it comes, tagged by call', async () => {
    const { provider } = fakeProvider(() => ({ content: 'one two three' }));
    const echo = defineAgent({
      name: 'echo',
      version: '1',
      model: MODEL,
      tools: [],
      run: async (ctx) => {
        const first = await ctx.model({ prompt: 'say' });
        const second = await ctx.model({ prompt: 'again' });
        return `${first.content} ${second.content}`;
      },
    });
    const model = served([echo], provider);
    let state: RunState = initialRunState();
    let seq = 0;
    for (const [type, data] of [
      ['run_requested', { request: request('m-5', 'echo') }],
      ['run_started', model.start?.(request('m-5', 'echo')) ?? {}],
    ] as const)
      state = evolve(state, runEvent(type, data as never, { seq: (seq += 1), runId: 'm-5' }) as RunEvent);
    const deltas: string[] = [];
    const step = await plannerStep(state, nextAction(state), {
      model,
      now: new Date(),
      live: { delta: (call, text) => deltas.push(`${call}:${text}`), restart: () => undefined },
    });

    expect(step.kind).toBe('thought');
    // The step's two ctx.model calls, as calls 0 and 1 of its thought's journal.
    expect(deltas).toEqual(['0:one', '0:two', '0:three', '1:one', '1:two', '1:three']);
  });
});

describe('ctx.loop', () => {
  const researcher = defineAgent({
    name: 'researcher',
    version: '1',
    model: MODEL,
    tools: ['web.search'],
    async run(ctx, question: string) {
      const result = await ctx.loop({
        system: 'Research.',
        prompt: question,
        tools: ['web.search'],
        maxTurns: 3,
      });
      return { text: result.text, turns: result.turns, finished: result.finished };
    },
  });

  it('given a model asking for two searches at once, when looped, then they are one decision with parallel intents and the answer ends the loop', async () => {
    const { provider, asked } = fakeProvider((r) =>
      r.messages.some((m) => m.role === 'tool')
        ? { content: 'rust is fast' }
        : {
            toolCalls: [
              { id: 'c1', name: 'web.search', arguments: { q: 'rust' } as never },
              { id: 'c2', name: 'web.search', arguments: { q: 'speed' } as never },
            ],
          },
    );
    const run = await simulateRun(
      { ...request('l-1', 'researcher'), input: 'is rust fast?' },
      served([researcher], provider),
      {
        result: (step) => ({ hit: step }),
      },
    );

    expect(run.state.status).toBe('completed');
    expect(run.state.output).toEqual({ text: 'rust is fast', turns: 2, finished: true });
    const decisions = run.events.flatMap((e) => (e.type === 'thought' ? [e.data.decision] : []));
    expect(decisions[0]).toMatchObject({
      kind: 'tool_calls',
      calls: [
        { tool: 'web.search', args: { q: 'rust' } },
        { tool: 'web.search', args: { q: 'speed' } },
      ],
    });
    // The tools are described to the model with their JSON schemas; the results come back as tool messages.
    expect(asked[0]?.tools).toEqual([
      expect.objectContaining({
        name: 'web.search',
        parameters: expect.objectContaining({ type: 'object' }) as object,
      }),
    ]);
    expect(asked[1]?.messages.filter((m) => m.role === 'tool')).toEqual([
      { role: 'tool', toolCallId: 'c1', name: 'web.search', content: JSON.stringify({ hit: 1 }) },
      { role: 'tool', toolCallId: 'c2', name: 'web.search', content: JSON.stringify({ hit: 2 }) },
    ]);
  });

  it('given a model that never stops asking, when looped, then the bound ends it unfinished', async () => {
    const { provider, asked } = fakeProvider(() => ({
      toolCalls: [{ id: 'c', name: 'web.search', arguments: { q: 'more' } as never }],
    }));
    const run = await simulateRun(
      { ...request('l-2', 'researcher'), input: 'q' },
      served([researcher], provider),
    );

    expect(run.state.output).toEqual({ text: '', turns: 3, finished: false });
    expect(asked).toHaveLength(3);
  });
});

describe('the triage example of docs/agents-as-code.md', () => {
  const tickets = (name: string) =>
    defineTool({
      name,
      description: name,
      input: z.object({ query: z.string().optional(), label: z.string().optional() }),
      safety: 'idempotent',
      execute: () => Promise.resolve(null),
    });
  const triage = defineAgent({
    name: 'triage',
    version: '3',
    model: {
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      apiKeyEnv: 'ANTHROPIC_API_KEY',
      maxTokens: 512,
    },
    tools: ['tickets.search', 'tickets.label'],
    budget: { maxCostUsd: 0.5 },
    async run(ctx, ticket: string) {
      const kind = await ctx.model({
        system: 'Answer bug, question or other.',
        prompt: ticket,
        maxTokens: 5,
      });
      if (kind.content.trim() !== 'bug') return { kind: kind.content };
      const { text } = await ctx.loop({
        system: 'Find duplicates, then label the ticket.',
        prompt: ticket,
        tools: ['tickets.search', 'tickets.label'],
        maxTurns: 6,
      });
      return { kind: 'bug', text };
    },
  });

  it('classifies with one small call, then loops over the tools, within its cost budget', async () => {
    const { provider, asked } = fakeProvider((r) => {
      if (r.maxTokens === 5) return { content: 'bug' };
      const results = r.messages.filter((m) => m.role === 'tool').length;
      if (results === 0) return { toolCalls: [{ id: 's', name: 'tickets.search', arguments: {} }] };
      if (results === 1) return { toolCalls: [{ id: 'l', name: 'tickets.label', arguments: {} }] };
      return { content: 'labelled as a duplicate' };
    });
    const model = withCodeAgents({
      agents: [triage],
      base: createScriptedModel(),
      tools: new ToolRegistry([tickets('tickets.search'), tickets('tickets.label')]),
      prices: { 'claude-sonnet-4-5': { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } },
      providerFor: () => provider,
    });
    const run = await simulateRun({ ...request('t-1', 'triage'), input: 'app crashes on start' }, model);

    expect(run.state.output).toEqual({ kind: 'bug', text: 'labelled as a duplicate' });
    expect(asked.map((r) => r.model)).toEqual(Array(4).fill('claude-sonnet-4-5'));
    expect(asked[1]?.tools.map((t) => t.name)).toEqual(['tickets.search', 'tickets.label']);
    expect(run.events.filter((e) => e.type === 'budget_reserved')).toHaveLength(3);
    expect(run.state.budget.costUsd).toBeGreaterThan(0);
  });
});
