import { describe, expect, it } from 'vitest';
import { APICallError } from '@ai-sdk/provider';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { defineAgent, type Ctx } from '@dura/code-agents';
import { SimRun } from '@dura/code-agents/testing';
import { durable, duraTools } from '../src/index';
import { providerFailure } from '../src/provider-errors';
import { scriptedModel } from './scripted-language-model';

const anyObject = jsonSchema<Record<string, unknown>>({ type: 'object' });

describe('nothing runs non-durably', () => {
  it('given no Dura ctx, when a durable model or Dura tools are made, then it fails saying where to make them', () => {
    const model = scriptedModel(() => ({ text: 'never' }));
    expect(() => durable(undefined as never, model)).toThrow(
      /durable\(ctx, model\) needs the ctx of a Dura code agent .* got undefined: outside a Dura execution nothing would be recorded/,
    );
    expect(() => duraTools({ tool: () => 1 } as never, ['web.search'])).toThrow(
      /not_in_execution|needs the ctx of a Dura code agent/,
    );
    expect(model.asked).toHaveLength(0);
  });

  it('given the ctx of a run whose code returned, when a durable model is called with it, then the call fails and the model is not asked', async () => {
    const model = scriptedModel(() => ({ text: 'never' }));
    let kept: Ctx | undefined;
    const agent = defineAgent({
      name: 'leaky',
      version: '1',
      tools: [],
      run: (ctx) => {
        kept = ctx;
        return Promise.resolve('done');
      },
    });
    const end = await new SimRun(agent, {}).drive();
    expect(end.state.status).toBe('completed');

    await expect(generateText({ model: durable(kept!, model), prompt: 'late' })).rejects.toThrow(
      /came after its code returned or stopped: a model call outside a Dura execution is never made/,
    );
    expect(model.asked).toHaveLength(0);
  });

  it('given an AI SDK tool with its own execute, when passed to duraTools, then it is refused naming the tool and the fix', async () => {
    let ran = 0;
    const agent = defineAgent({
      name: 'own-tool',
      version: '1',
      tools: [],
      run: (ctx) => {
        duraTools(ctx, { mine: tool({ inputSchema: anyObject, execute: () => (ran += 1) }) });
        return Promise.resolve('unreachable');
      },
    });
    const end = await new SimRun(agent, {}).drive();

    expect(end.state.error).toMatchObject({ code: 'agent_misuse' });
    expect(end.state.error?.message).toMatch(
      /the tool mine has an execute of its own, which would run in this process, unrecorded.*Define it as a Dura tool/,
    );
    expect(ran).toBe(0);
  });

  it('given a tool with execute offered to a durable model directly, when generateText runs, then the run fails before the model is asked', async () => {
    let ran = 0;
    const model = scriptedModel(() => ({ calls: [{ name: 'mine', input: {} }] }));
    const agent = defineAgent({
      name: 'foreign-tool',
      version: '1',
      tools: [],
      run: async (ctx) =>
        (
          await generateText({
            model: durable(ctx, model),
            tools: { mine: tool({ inputSchema: anyObject, execute: () => (ran += 1) }) },
            stopWhen: stepCountIs(2),
            prompt: 'go',
          })
        ).text,
    });
    const end = await new SimRun(agent, {}).drive();

    expect(end.state.error).toMatchObject({ code: 'agent_misuse' });
    expect(end.state.error?.message).toMatch(
      /offered tools that are not Dura tools \(mine\).*duraTools\(ctx/,
    );
    expect([model.asked.length, ran]).toEqual([0, 0]);
  });

  it('given a tool without execute through duraTools, when the model calls it, then the call comes back to the code to act on through ctx', async () => {
    const model = scriptedModel(() => ({ calls: [{ name: 'ask_user', input: { q: 'why' } }] }));
    const agent = defineAgent({
      name: 'client-tool',
      version: '1',
      tools: [],
      run: async (ctx) => {
        const result = await generateText({
          model: durable(ctx, model),
          tools: duraTools(ctx, { ask_user: tool({ inputSchema: anyObject }) }),
          prompt: 'go',
        });
        return result.toolCalls.map((call) => ({ name: call.toolName, input: call.input }));
      },
    });
    const end = await new SimRun(agent, {}).drive();

    expect(end.state.output).toEqual([{ name: 'ask_user', input: { q: 'why' } }]);
  });
});

describe('provider failures', () => {
  const model = { provider: 'openai.chat', modelId: 'gpt-x' };
  const apiError = (status: number, isRetryable: boolean) =>
    new APICallError({
      message: 'nope',
      url: 'http://x',
      requestBodyValues: {},
      statusCode: status,
      isRetryable,
    });

  it('given a refusal the provider would repeat, then it is final: model_request_rejected, not retryable', () => {
    const failure = providerFailure(apiError(400, false), model);
    expect(failure).toMatchObject({ code: 'model_request_rejected', retryable: false });
    expect(failure.message).toMatch(/openai\.chat model "gpt-x" refused the request \(HTTP 400\): nope/);
  });

  it('given an outage, a rate limit or a cut connection, then the decision is retried later', () => {
    expect(providerFailure(apiError(503, true), model)).toMatchObject({
      code: 'model_unavailable',
      retryable: true,
    });
    expect(providerFailure(new TypeError('fetch failed'), model)).toMatchObject({
      code: 'model_unavailable',
      retryable: true,
    });
  });
});
