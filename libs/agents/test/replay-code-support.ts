// Shared by the replay specs of code agents: a run request and the planner's model serving code agents.
import { defineAgent, type AnyCodeAgent, type ModelAnswer } from '@dura/code-agents';
import type { JsonObject, RunRequest } from '@dura/contracts';
import { createScriptedModel, withCodeAgents, type Model } from '../src/index';

export function request(runId: string, name: string, input?: JsonObject): RunRequest & { runId: string } {
  return { v: 1, runId, agent: { kind: 'agent', name }, ...(input ? { input } : {}) };
}

/** The planner's model for these agents; `answer` serves `ctx.model` in process. */
export function served(agents: AnyCodeAgent[], answer?: (q: JsonObject) => ModelAnswer): Model {
  return withCodeAgents({
    agents,
    base: createScriptedModel(),
    ...(answer ? { answer: (q: JsonObject) => Promise.resolve(answer(q)) } : {}),
  });
}

/** The agent `stepper`: one call of `tool`, then a wait for the signal `go` (so it can be served other code mid-run). */
export function stepper(tool: string): AnyCodeAgent {
  return defineAgent({
    name: 'stepper',
    version: '1',
    tools: ['pay.charge', 'pay.checked'],
    async run(ctx) {
      await ctx.tool(tool, { amount: 1 });
      await ctx.waitForSignal('go');
      return 'done';
    },
  });
}
