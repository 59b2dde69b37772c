import { describe, expect, it } from 'vitest';
import { generateObject, generateText, stepCountIs, streamObject, streamText } from 'ai';
import * as z from 'zod';
import type { JsonObject } from '@dura/contracts';
import { defineAgent, type Ctx } from '@dura/code-agents';
import { decodeJournal } from '@dura/code-agents/engine';
import { SimRun, type World } from '@dura/code-agents/testing';
import { durable, duraTools } from '../src/index';
import { scriptedModel, type ScriptedReply } from './scripted-language-model';

const TOOLS = ['web.search', 'notes.save', 'pay.charge'];

/** Search, then save a note and pay at once, search again, answer: four model calls, four tool steps. */
function research(last: string): ScriptedReply {
  if (last.startsWith('research')) return { calls: [{ name: 'web_search', input: { q: 'dura' } }] };
  if (last.includes('web_search=') && last.includes('first'))
    return {
      calls: [
        { name: 'notes_save', input: { text: 'dura is durable' } },
        { name: 'pay_charge', input: { amount: 5 } },
      ],
    };
  if (last.includes('pay_charge=')) return { calls: [{ name: 'web_search', input: { q: 'more' } }] };
  if (last.includes('web_search=')) return { text: 'Dura keeps agents alive.' };
  throw new Error(`unexpected prompt ${last}`);
}

const world = (live = false): World & { searches: number } => {
  const w = {
    live,
    searches: 0,
    tools: {
      'web.search': (args: JsonObject) => ({
        hit: w.searches++ === 0 ? 'first' : 'second',
        q: args['q'] ?? null,
      }),
      'notes.save': () => ({ saved: true }),
      'pay.charge': (args: JsonObject) => ({ charged: args['amount'] ?? null }),
    },
  };
  return w;
};

function agentWith(run: (ctx: Ctx) => Promise<unknown>) {
  return defineAgent({ name: 'ai-researcher', version: '1', tools: TOOLS, run: run as never });
}

describe('an AI SDK agent over a durable model', () => {
  for (const live of [false, true])
    it(`given generateText with three Dura tools in a 6-step loop, when driven ${live ? 'by a kept execution' : 'by replay from the start each step'}, then each model call is made once and each tool runs once as ctx.tool`, async () => {
      const model = scriptedModel(research);
      const agent = agentWith(async (ctx) => {
        const result = await generateText({
          model: durable(ctx, model),
          tools: duraTools(ctx, TOOLS),
          stopWhen: stepCountIs(6),
          prompt: 'research dura',
        });
        return { text: result.text, steps: result.steps.length };
      });
      const run = new SimRun(agent, world(live));
      const end = await run.drive();

      expect(end.state.status).toBe('completed');
      expect(end.state.output).toEqual({ text: 'Dura keeps agents alive.', steps: 4 });
      expect(model.asked.map((a) => a.mode)).toEqual(['generate', 'generate', 'generate', 'generate']);
      expect(run.toolCalls).toEqual(['web.search', 'notes.save', 'pay.charge', 'web.search']);
      // Each answer is in the log with its usage; the budget counts them.
      expect(end.state.usage).toEqual({ inputTokens: 44, outputTokens: 20 });
    });

  it('given streamText, when driven by replay, then the stream is recorded assembled and replayed as parts with the same text', async () => {
    const model = scriptedModel(research);
    const agent = agentWith(async (ctx) => {
      const result = streamText({
        model: durable(ctx, model),
        tools: duraTools(ctx, TOOLS),
        stopWhen: stepCountIs(6),
        prompt: 'research dura',
      });
      let streamed = '';
      for await (const delta of result.textStream) streamed += delta;
      return { streamed, text: await result.text };
    });
    const run = new SimRun(agent, world());
    const end = await run.drive();

    expect(end.state.status).toBe('completed');
    expect(end.state.output).toEqual({
      streamed: 'Dura keeps agents alive.',
      text: 'Dura keeps agents alive.',
    });
    expect(model.asked.map((a) => a.mode)).toEqual(['stream', 'stream', 'stream', 'stream']);
    const thoughts = run.events.flatMap((e) => (e.type === 'thought' ? [e.data] : []));
    const last = decodeJournal(thoughts.at(-1)?.content).at(-1);
    expect(last).toMatchObject({
      k: 'model',
      a: { content: 'Dura keeps agents alive.', finishReason: 'stop' },
    });
    // One text delta: the answer's pieces joined.
    const parts = (last?.k === 'model' ? (last.a.native as { parts: { type: string }[] }).parts : []).map(
      (p) => p.type,
    );
    expect(parts.filter((type) => type === 'text-delta')).toHaveLength(1);
  });

  it('given generateObject and streamObject, when driven by replay, then each returns the parsed object, asked once', async () => {
    const model = scriptedModel((last) => ({ text: JSON.stringify({ topic: last, score: 3 }) }));
    const schema = z.object({ topic: z.string(), score: z.number() });
    const agent = agentWith(async (ctx) => {
      const whole = await generateObject({ model: durable(ctx, model), schema, prompt: 'a' });
      const streamed = streamObject({ model: durable(ctx, model), schema, prompt: 'b' });
      // As outside Dura, streamObject's object settles once its stream is read.
      let partials = 0;
      for await (const _partial of streamed.partialObjectStream) partials += 1;
      return { whole: whole.object, streamed: await streamed.object, partials: partials > 0 };
    });
    const run = new SimRun(agent, world());
    const end = await run.drive();

    expect(end.kind === 'blocked' ? end.error.message : end.state.error?.message).toBeUndefined();
    expect(end.state.status).toBe('completed');
    expect(end.state.output).toEqual({
      whole: { topic: 'a', score: 3 },
      streamed: { topic: 'b', score: 3 },
      partials: true,
    });
    expect(model.asked.map((a) => a.mode)).toEqual(['generate', 'stream']);
  });

  it('given a call without maxOutputTokens, when made, then it is bounded by the durable default the budget reserves', async () => {
    const model = scriptedModel(() => ({ text: 'ok' }));
    const agent = agentWith(
      async (ctx) =>
        (await generateText({ model: durable(ctx, model, { maxOutputTokens: 300 }), prompt: 'x' })).text,
    );
    const end = await new SimRun(agent, world()).drive();

    expect(end.state.output).toBe('ok');
    expect(model.asked[0]?.options.maxOutputTokens).toBe(300);
  });

  it('given a code change that asks the model something else at a recorded position, when replayed, then the run blocks naming both', async () => {
    const model = scriptedModel(() => ({ text: 'ok' }));
    const asking = (prompt: string) =>
      agentWith(async (ctx) => {
        const first = await generateText({ model: durable(ctx, model), prompt });
        await ctx.waitForSignal('go');
        return first.text;
      });
    const run = new SimRun(asking('one'), world());
    expect((await run.drive()).kind).toBe('waiting');
    run.signal('go');
    const end = await run.drive(asking('two'));

    expect(end.kind).toBe('blocked');
    expect(end.kind === 'blocked' ? end.error.message : '').toMatch(
      /the log recorded ctx\.model \(request [0-9a-f]{12}\), the code now asks for ctx\.model/,
    );
  });
});
