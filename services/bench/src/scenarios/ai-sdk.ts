// L: what Dura adds to an AI SDK call. The same `generateText` (through @ai-sdk/openai's Chat Completions
// model, against a fake OpenAI-compatible server on real HTTP) is timed alone, then as a durable step: a code
// agent's run whose one step is that call through `durable(ctx, model)`, driven to completion by the
// planner's run driver over a real nats-server (read, decide: replay the code and make the call, append the
// thought that records the answer and the run's completion).
import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';
import * as z from 'zod';
import { createScriptedModel, withCodeAgents } from '@dura/agents';
import { defineAgent } from '@dura/code-agents';
import { durable } from '@dura/ai-sdk';
import { startFakeLlmServer } from '@dura/testing';
import { countReporter } from '../progress';
import type { BenchScenarios } from '../schema';
import { distribution, round } from '../stats';
import { openDriverStack } from './driver-stack';

const WARM_UP = 5;
const ANSWER = 'A short answer of a few words, as a tool-less step gives.';

export async function aiSdkOverhead(sizes: {
  aisdkSamples: number;
}): Promise<NonNullable<BenchScenarios['aisdk']>> {
  await using fake = await startFakeLlmServer({
    provider: 'openai',
    respond: () => ({ kind: 'message', content: ANSWER, usage: { inputTokens: 20, outputTokens: 12 } }),
  });
  const model = createOpenAI({ baseURL: fake.url, apiKey: 'bench' }).chat('fake-1');
  const agent = defineAgent({
    name: 'bench-aisdk',
    version: '1',
    tools: [],
    input: z.object({ i: z.number().int() }),
    run: async (ctx, { i }) =>
      (await generateText({ model: durable(ctx, model), prompt: `question ${i}` })).text,
  });

  const plainMs: number[] = [];
  const report = countReporter('L: plain generateText calls', sizes.aisdkSamples, 50);
  for (let i = 0; i < WARM_UP + sizes.aisdkSamples; i += 1) {
    const began = performance.now();
    const { text } = await generateText({ model, prompt: `question ${i}` });
    if (text !== ANSWER) throw new Error(`the fake answered ${text}`);
    if (i >= WARM_UP) plainMs.push(performance.now() - began);
    report(plainMs.length);
  }

  await using stack = await openDriverStack('dura-bench-aisdk');
  const driver = stack.driverOf(withCodeAgents({ agents: [agent], base: createScriptedModel() }));
  const durableMs: number[] = [];
  const stepReport = countReporter('L: durable AI SDK steps', sizes.aisdkSamples, 50);
  for (let i = 0; i < WARM_UP + sizes.aisdkSamples; i += 1) {
    const runId = `aisdk-${i}`;
    await stack.request({ v: 1, runId, agent: { kind: 'agent', name: agent.name }, input: { i } });
    const began = performance.now();
    const outcome = await driver.drive(runId);
    if (outcome.state.status !== 'completed' || outcome.state.output !== ANSWER)
      throw new Error(`run ${runId} ended ${outcome.state.status}: ${JSON.stringify(outcome.state.error)}`);
    if (i >= WARM_UP) durableMs.push(performance.now() - began);
    stepReport(durableMs.length);
  }
  const plain = distribution(plainMs);
  const durableStep = distribution(durableMs);
  return {
    mode: 'in-process',
    note:
      'plainMs: generateText through @ai-sdk/openai (chat) against a fake OpenAI-compatible server on ' +
      'localhost; durableStepMs: the same call as the one step of a code agent (durable(ctx, model)), one ' +
      'drive() of the planner run driver over a real nats-server from run_requested to run_completed (start, ' +
      'replay the code, make the call, append the thought with the answer and the completion); overheadMs: ' +
      `durable minus plain per percentile; ${WARM_UP} warm-up calls of each not counted`,
    samples: sizes.aisdkSamples,
    plainMs: plain,
    durableStepMs: durableStep,
    overheadMs: { p50: round(durableStep.p50 - plain.p50), p99: round(durableStep.p99 - plain.p99) },
  };
}
