import { describe, expect, it } from 'vitest';
import type { RunRequest } from '@dura/contracts';
import * as z from 'zod';
import { defineTool, ToolRegistry } from '@dura/tools';
import {
  AgentRegistry,
  createAgentModel,
  createModelRouter,
  createScriptedModel,
  replayModelFor,
  replayRun,
  type AgentsFile,
  type Model,
} from '../src/index';
import { simulateRun } from '../src/testing';

const tools = new ToolRegistry([
  defineTool({
    name: 'pay.charge',
    description: 'Charge the customer.',
    input: z.object({ amount: z.number() }),
    safety: 'idempotent',
    execute: () => Promise.resolve({ ok: true }),
  }),
]);

/** The planner's own model for `file`: the router the planner serves agents with. */
function plannerModel(
  file: AgentsFile,
  providerFor?: Parameters<typeof createAgentModel>[0]['providerFor'],
): Model {
  const agents = createAgentModel({
    agents: new AgentRegistry(file),
    tools,
    env: {},
    ...(providerFor ? { providerFor } : {}),
  });
  return createModelRouter({ scripted: createScriptedModel(), agents, tools });
}

function scriptedAgents(secondTool: string): AgentsFile {
  const steps = [
    { tool: 'pay.charge', args: { amount: 100 } },
    { tool: secondTool, args: { amount: 200 } },
  ];
  return {
    agents: [
      {
        name: 'payer',
        version: '1',
        tools: ['pay.charge', 'pay.refund'],
        budget: { maxSteps: 10, maxTokens: 10_000 },
        model: { provider: 'scripted', steps },
      },
    ],
  } as unknown as AgentsFile;
}

const llmAgents = {
  agents: [
    {
      name: 'talker',
      version: '3',
      systemPrompt: 'Charge the customer, then say done.',
      tools: ['pay.charge'],
      budget: { maxCostUsd: 1 },
      model: { provider: 'openai', model: 'fake-1', baseUrl: 'http://127.0.0.1:9/v1' },
    },
  ],
  prices: { 'fake-1': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
} as unknown as AgentsFile;

/** A provider that charges once and then answers with text: what an LLM would, with made-up usage. */
const fakeProvider = () => ({
  provider: 'openai' as const,
  chat: (request: { messages: { role: string }[] }) => {
    const charged = request.messages.some((message) => message.role === 'tool');
    return Promise.resolve({
      ...(charged ? { content: 'done' } : {}),
      toolCalls: charged ? [] : [{ id: 'tc-1', name: 'pay.charge', arguments: { amount: 7 } }],
      usage: { inputTokens: 40 + request.messages.length, outputTokens: 5 },
      finishReason: charged ? 'stop' : 'tool_calls',
      modelId: 'fake-1',
    });
  },
});

function agentRequest(runId: string, name: string): RunRequest & { runId: string } {
  return { runId, agent: { kind: 'agent', name }, input: 'go' } as RunRequest & { runId: string };
}

describe('replay of agent runs', () => {
  it('a JSON agent with a scripted model: run_started with pin and budget, then every step, no divergence', async () => {
    const file = scriptedAgents('pay.charge');
    const { events, state } = await simulateRun(agentRequest('a-1', 'payer'), plannerModel(file));
    expect(state.status).toBe('completed');
    const started = events.find((e) => e.type === 'run_started')!;
    expect(started.data).toMatchObject({ pinned: { agent: 'payer', version: '1' }, budgetPolicy: 'fail' });
    expect(events.some((e) => e.type === 'budget_reserved')).toBe(true);
    const agents = new AgentRegistry(file);
    expect(await replayRun({ events, model: replayModelFor(events, { agents }) })).toMatchObject({
      ok: true,
      checked: events.length,
    });
    // Without the definitions, the recorded pin stands: still no false divergence at run_started.
    expect(await replayRun({ events })).toMatchObject({ ok: true, checked: events.length });
  });

  it('names the first divergent call when the agent definition asks for another tool at a recorded step', async () => {
    const { events } = await simulateRun(
      agentRequest('a-2', 'payer'),
      plannerModel(scriptedAgents('pay.charge')),
    );
    const changed = new AgentRegistry(scriptedAgents('pay.refund'));
    const second = events.filter((e) => e.type === 'thought')[1]!;
    const result = await replayRun({ events, model: replayModelFor(events, { agents: changed }) });
    expect(result).toMatchObject({
      ok: false,
      seq: second.seq,
      reason: 'the recorded thought differs from what the planner decides now at data.decision.calls[0].tool',
      expected: { type: 'thought', data: { decision: { calls: [{ tool: 'pay.refund' }] } } },
      actual: { type: 'thought', data: { decision: { calls: [{ tool: 'pay.charge' }] } } },
    });
  });

  it('an LLM agent: answered from its recorded thoughts, with prompt and cost, pinned by its definitions', async () => {
    const model = plannerModel(llmAgents, fakeProvider);
    const { events, state } = await simulateRun(agentRequest('a-3', 'talker'), model);
    expect(state.status).toBe('completed');
    const thought = events.find((e) => e.type === 'thought')!;
    expect(thought.data).toHaveProperty('prompt');
    expect(thought.data).toHaveProperty('costUsd');
    const agents = new AgentRegistry(llmAgents);
    expect(await replayRun({ events, model: replayModelFor(events, { agents }) })).toMatchObject({
      ok: true,
    });
    expect(await replayRun({ events })).toMatchObject({ ok: true, checked: events.length });
  });

  it('an LLM agent whose definition now pins another prompt diverges at run_started', async () => {
    const { events } = await simulateRun(
      agentRequest('a-4', 'talker'),
      plannerModel(llmAgents, fakeProvider),
    );
    const reprompted = structuredClone(llmAgents) as { agents: { systemPrompt: string }[] };
    reprompted.agents[0]!.systemPrompt = 'Refund the customer.';
    const agents = new AgentRegistry(reprompted as unknown as AgentsFile);
    const started = events.find((e) => e.type === 'run_started')!;
    expect(await replayRun({ events, model: replayModelFor(events, { agents }) })).toMatchObject({
      ok: false,
      seq: started.seq,
      reason:
        'the recorded run_started differs from what the planner decides now at data.pinned.promptVersion',
    });
  });
});
