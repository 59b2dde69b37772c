import { describe, expect, it } from 'vitest';
import { DuraError, type RunEvent, type RunRequest } from '@dura/contracts';
import { evolve, initialRunState, nextAction, type RunState } from '@dura/core';
import { runEvent } from '@dura/core/testing';
import { ToolRegistry } from '@dura/tools';
import {
  AgentRegistry,
  createAgentModel,
  createModelRouter,
  createScriptedModel,
  plannerStep,
  withCodeAgents,
  type AgentsFile,
  type ChatProvider,
  type PlannerModel,
} from '../src/index';
import { twiceAgent } from './code-agent-support';

// A code agent's model call is confirmed right before its request leaves (the planner reads the run's log past
// the state it decides on): a replica whose view is stale, or that cannot read the log, asks no provider.

function countingProvider(order: string[]): ChatProvider {
  return {
    provider: 'openai',
    chat() {
      order.push('asked');
      return Promise.resolve({
        content: 'ok',
        toolCalls: [],
        usage: { inputTokens: 1, outputTokens: 1 },
        finishReason: 'stop',
        modelId: 'fake-1',
      });
    },
  };
}

function requested(runId: string, name = 'twice'): RunState {
  const request: RunRequest & { runId: string } = { v: 1, runId, agent: { kind: 'agent', name } };
  const event = runEvent('run_requested', { request }, { seq: 1, runId }) as RunEvent;
  return evolve(initialRunState(), event);
}

/** A JSON agent asking an OpenAI-compatible model. */
const TALKER = {
  agents: [
    {
      name: 'talker',
      version: '1',
      systemPrompt: 'Say done.',
      tools: [],
      model: { provider: 'openai', model: 'fake-1', baseUrl: 'http://127.0.0.1:9/v1' },
    },
  ],
} as unknown as AgentsFile;

async function step(runId: string, confirm: () => Promise<void>, order: string[], json = false) {
  const providerFor = () => countingProvider(order);
  const tools = new ToolRegistry([]);
  const model: PlannerModel = json
    ? createModelRouter({
        scripted: createScriptedModel(),
        agents: createAgentModel({ agents: new AgentRegistry(TALKER), tools, env: {}, providerFor }),
        tools,
      })
    : withCodeAgents({ agents: [twiceAgent()], base: createScriptedModel(), providerFor });
  let state = requested(runId, json ? 'talker' : 'twice');
  // The run's start first (its pinned version), as the planner records it.
  const start = await plannerStep(state, nextAction(state), { model, now: new Date() });
  if (start.kind !== 'start') throw new Error(`expected the run's start, got ${start.kind}`);
  for (const [i, draft] of start.drafts.entries())
    state = evolve(state, runEvent(draft.type, draft.data as never, { seq: 2 + i, runId }) as RunEvent);
  return plannerStep(state, nextAction(state), {
    model,
    now: new Date(),
    watched: (_state, run) => run(new AbortController().signal, confirm),
    // As the planner's model call passes it (services/planner/src/model-call.ts).
    ask: (input) => model.decide({ ...input, confirm }),
  });
}

describe("a code agent's model call, confirmed before it is asked", () => {
  it('is asked once the planner confirmed the run is where the call decides on it, each call of the step', async () => {
    const order: string[] = [];
    const result = await step(
      'confirm-1',
      () => {
        order.push('confirmed');
        return Promise.resolve();
      },
      order,
    );
    expect(result.kind).toBe('thought');
    expect(order).toEqual(['confirmed', 'asked', 'confirmed', 'asked']);
  });

  it('is not asked when the planner finds the decision recorded meanwhile, or cannot read the log', async () => {
    for (const refusal of [
      new DuraError('decision_superseded', 'another replica recorded thought at #7', { retryable: true }),
      new DuraError('log_unreadable', 'its log could not be read', { retryable: true }),
    ]) {
      const order: string[] = [];
      await expect(step('confirm-2', () => Promise.reject(refusal), order)).rejects.toBe(refusal);
      expect(order).toEqual([]);
    }
  });

  it("is confirmed before a JSON agent's model is asked too", async () => {
    const order: string[] = [];
    const confirm = () => {
      order.push('confirmed');
      return Promise.resolve();
    };
    expect((await step('confirm-3', confirm, order, true)).kind).toBe('thought');
    expect(order).toEqual(['confirmed', 'asked']);
    const refusal = new DuraError('log_unreadable', 'its log could not be read', { retryable: true });
    const refused: string[] = [];
    await expect(step('confirm-4', () => Promise.reject(refusal), refused, true)).rejects.toBe(refusal);
    expect(refused).toEqual([]);
  });
});
