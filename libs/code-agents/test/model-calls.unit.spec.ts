import { describe, expect, it } from 'vitest';
import { defineAgent, type ModelAnswer } from '../src/index';
import {
  decideNext,
  decodeJournal,
  encodeJournal,
  recordedAnswer,
  type ResolvedModelRequest,
} from '../src/engine';
import { answer, countingFresh, SimRun, TEST_MODEL, types } from '../src/testing';

function calling(toolCalls: ModelAnswer['toolCalls'], content = ''): ModelAnswer {
  return { ...answer(content), ...(toolCalls ? { toolCalls } : {}) };
}

describe('ctx.model requests', () => {
  it('given an agent without model settings, when it calls ctx.model, then the run fails saying how to declare one', async () => {
    const bare = defineAgent({
      name: 'bare',
      version: '1',
      tools: [],
      run: async (ctx) => (await ctx.model({ prompt: 'hi' })).content,
    });
    const run = new SimRun(bare, { model: () => 'never' });
    const end = await run.drive();

    expect(run.modelCalls).toBe(0);
    expect(end.state.status).toBe('failed');
    expect(end.state.error?.code).toBe('agent_misuse');
    expect(end.state.error?.message).toMatch(/declares no model: add defineAgent\(\{ model: \{ provider/);
  });

  it('given a request without a prompt or messages, or offering undeclared tools, when asked, then the code gets a misuse it can catch', async () => {
    const careless = defineAgent({
      name: 'careless',
      version: '1',
      model: TEST_MODEL,
      tools: ['web.search'],
      async run(ctx) {
        const errors: string[] = [];
        for (const request of [{ system: 'only a system prompt' }, { prompt: 'x', tools: ['mail.send'] }])
          await ctx.model(request).catch((err: Error) => errors.push(err.message));
        return errors;
      },
    });
    const run = new SimRun(careless, {});
    const end = await run.drive();

    expect(run.modelCalls).toBe(0);
    const [empty, undeclared] = end.state.output as string[];
    expect(empty).toMatch(/the request is invalid: .*give a prompt or a non-empty messages list/);
    expect(undeclared).toMatch(/offers tools the agent does not declare \(mail\.send\)/);
  });

  it('given model settings, when the code asks, then the request sent carries them, the system prompt and the prompt last', async () => {
    const seen: ResolvedModelRequest[] = [];
    const asker = defineAgent({
      name: 'asker',
      version: '1',
      model: { provider: 'anthropic', model: 'claude-x', maxTokens: 300, temperature: 0.2 },
      tools: [],
      run: async (ctx) =>
        (
          await ctx.model({
            system: 'Be brief.',
            messages: [{ role: 'user', content: 'earlier' }],
            prompt: 'now',
            model: 'claude-y',
          })
        ).content,
    });
    await new SimRun(asker, { model: (request) => (seen.push(request), 'ok') }).drive();

    expect(seen).toEqual([
      {
        provider: 'anthropic',
        model: 'claude-y',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'earlier' },
          { role: 'user', content: 'now' },
        ],
        tools: [],
        maxTokens: 300,
        temperature: 0.2,
      },
    ]);
  });

  it('given a recorded call, when the agent now sends it with other model settings, then it is non-determinism', async () => {
    const asker = defineAgent({
      name: 'asker',
      version: '1',
      model: TEST_MODEL,
      tools: ['t'],
      run: async (ctx) => ctx.tool('t', { a: (await ctx.model({ prompt: 'same' })).content }),
    });
    const run = new SimRun(asker, { tools: { t: () => 1 }, model: () => 'yes' });
    await run.drive();
    const cheaper = defineAgent({ ...asker, model: { ...TEST_MODEL, maxTokens: 10 } });

    const step = await decideNext(cheaper, run.events.slice(0, -2), { fresh: countingFresh() });

    expect(step.kind).toBe('blocked');
    expect(step.kind === 'blocked' && step.error.message).toMatch(
      /recorded ctx\.model \(request [0-9a-f]{12}\)/,
    );
  });

  it('given invalid model settings, when the agent is defined, then it throws naming the field', () => {
    expect(() =>
      defineAgent({
        name: 'typo',
        version: '1',
        model: { provider: 'openai', model: 'm', apiKeyEnv: 'lower_case' },
        tools: [],
        run: () => Promise.resolve(null),
      }),
    ).toThrow(
      /model settings of code agent typo@1 are invalid: apiKeyEnv: apiKeyEnv names an environment variable/,
    );
  });
});

describe('ctx.loop', () => {
  const researcher = defineAgent({
    name: 'researcher',
    version: '1',
    model: TEST_MODEL,
    tools: ['web.search', 'web.fetch'],
    run: (ctx, question: string) =>
      ctx.loop({ system: 'Research.', prompt: question, tools: ['web.search', 'web.fetch'], maxTurns: 3 }),
  });

  it('given a model asking for several tools at once, when looped, then they are one decision, and failures and unknown tools come back as error results', async () => {
    const requests: ResolvedModelRequest[] = [];
    const run = new SimRun(
      researcher,
      {
        tools: {
          'web.search': (args) => ({ hits: [args.q ?? null] }),
          'web.fetch': () => {
            throw new Error('timeout');
          },
        },
        model: (request) => {
          requests.push(request);
          if (requests.length > 1) return calling(undefined, 'the answer');
          return calling([
            { id: 'c1', name: 'web.search', arguments: { q: 'x' } },
            { id: 'c2', name: 'web.fetch', arguments: { url: 'u' } },
            { id: 'c3', name: 'shell.exec', arguments: {} },
          ]);
        },
      },
      'loop-1',
      'why?',
    );
    const end = await run.drive();

    expect(end.state.status).toBe('completed');
    expect(end.state.output).toMatchObject({ text: 'the answer', turns: 2, finished: true });
    expect(types(run.events).filter((t) => t === 'thought')).toHaveLength(2);
    expect(run.toolCalls).toEqual(['web.search', 'web.fetch']); // one decision; the unknown tool never ran
    expect(requests[0]).toMatchObject({
      tools: ['web.search', 'web.fetch'],
      messages: [{ role: 'system' }, { role: 'user', content: 'why?' }],
    });
    expect(requests[1]?.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        toolCalls: [
          { id: 'c1', name: 'web.search', arguments: { q: 'x' } },
          { id: 'c2', name: 'web.fetch', arguments: { url: 'u' } },
          { id: 'c3', name: 'shell.exec', arguments: {} },
        ],
      },
      { role: 'tool', toolCallId: 'c1', name: 'web.search', content: '{"hits":["x"]}' },
      {
        role: 'tool',
        toolCallId: 'c2',
        name: 'web.fetch',
        content: expect.stringMatching(/^error tool_error: /) as string,
        isError: true,
      },
      {
        role: 'tool',
        toolCallId: 'c3',
        name: 'shell.exec',
        content: expect.stringMatching(/^error unknown_tool: /) as string,
        isError: true,
      },
    ]);
  });

  it('given a model that keeps asking, when the bound is reached, then the loop returns unfinished and replays to the same log', async () => {
    const world = {
      tools: { 'web.search': () => ({ hits: [] }) },
      model: () => calling([{ id: 'c', name: 'web.search', arguments: { q: 'again' } }]),
    };
    const run = new SimRun(researcher, world, 'loop-2', 'q');
    const end = await run.drive();
    const live = new SimRun(researcher, { ...world, live: true }, 'loop-2', 'q');
    await live.drive();

    expect(end.state.output).toMatchObject({ turns: 3, finished: false });
    expect(run.modelCalls).toBe(3);
    expect(live.events.map((e) => [e.type, e.data])).toEqual(run.events.map((e) => [e.type, e.data]));
  });
});

describe('a framework call answered in place', () => {
  it('given an answer with its fields in any order, when recorded, then it is the form a replay decodes, byte for byte', () => {
    const answer = recordedAnswer(
      {
        native: { parts: [1] },
        finishReason: 'stop',
        modelId: 'm-1',
        usage: { outputTokens: 2, inputTokens: 1 },
        content: 'hi',
      },
      { version: '3' },
      0.5,
    );
    const encoded = encodeJournal([{ k: 'model', h: 'abc', a: answer }]);
    expect(encodeJournal(decodeJournal(encoded))).toBe(encoded);
    expect(answer).toEqual({
      content: 'hi',
      usage: { inputTokens: 1, outputTokens: 2 },
      model: { id: 'm-1', promptVersion: '3' },
      finishReason: 'stop',
      costUsd: 0.5,
      native: { parts: [1] },
    });
  });
});
