import { describe, expect, it } from 'vitest';
import { defineAgent } from '@dura/code-agents';
import { decodeJournal } from '@dura/code-agents/engine';
import { createScriptedModel, withCodeAgents } from '../src/index';
import { simulateRun } from '../src/testing';

describe("a framework's model call made in place (ctx.modelCall)", () => {
  it('given a metered run, when the code makes the call, then its worst case is reserved first, its text streams live and its answer is recorded priced, asked once', async () => {
    let invoked = 0;
    const agent = defineAgent({
      name: 'in-place',
      version: '4',
      tools: [],
      budget: { maxTokens: 10_000 },
      async run(ctx) {
        const answer = await ctx.modelCall({
          request: { framework: 'test', prompt: 'hi' },
          model: 'm-1',
          maxTokens: 100,
          inputChars: 400,
          invoke: (live) => {
            invoked += 1;
            live?.('hel');
            live?.('lo');
            const usage = { inputTokens: 50, outputTokens: 2 };
            return Promise.resolve({ content: 'hello', usage, modelId: 'm-1', finishReason: 'stop' });
          },
        });
        return answer.content;
      },
    });
    const model = withCodeAgents({
      agents: [agent],
      base: createScriptedModel(),
      prices: { 'm-1': { inputPerMTokUsd: 1_000_000, outputPerMTokUsd: 2_000_000 } },
    });
    const streamed: string[] = [];
    const run = await simulateRun(
      { v: 1, runId: 'ip-1', agent: { kind: 'agent', name: 'in-place' } },
      model,
      {
        live: { delta: (_call, delta) => streamed.push(delta), restart: () => undefined },
      },
    );

    expect(run.state.status).toBe('completed');
    expect(run.state.output).toBe('hello');
    expect([invoked, streamed.join('')]).toEqual([1, 'hello']);
    const types = run.events.map((e) => e.type);
    const reserved = run.events.find((e) => e.type === 'budget_reserved');
    expect(types.indexOf('budget_reserved')).toBeLessThan(types.indexOf('thought'));
    // 400 characters at 4 a token, plus the most output.
    expect(reserved?.type === 'budget_reserved' && reserved.data.tokens).toBe(200);
    const thought = run.events.find((e) => e.type === 'thought');
    const [entry] = decodeJournal(thought?.type === 'thought' ? thought.data.content : undefined);
    expect(entry).toMatchObject({ k: 'model', a: { model: { id: 'm-1', promptVersion: '4' }, costUsd: 54 } });
  });
});
