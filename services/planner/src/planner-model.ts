import type { ToolRegistry } from '@dura/tools';
import {
  createAgentModel,
  createCodeContinuations,
  createModelRouter,
  createScriptedModel,
  fileCallLog,
  withCodeAgents,
  type loadAgents,
  type ServingModel,
  type PayloadAccess,
} from '@dura/agents';

export interface PlannerModelParts {
  /** `DURA_AGENTS` as loaded: JSON agents (with their prices) and code agents. */
  agents: Awaited<ReturnType<typeof loadAgents>>;
  tools: ToolRegistry;
  payloads: PayloadAccess;
  /** Code-agent runs whose live execution is kept between steps (PLANNER_CODE_CONTINUATIONS); 0: always replay. */
  codeContinuations: number;
  /** Appends one JSON line per scripted-model call to this file (DURA_SCRIPTED_MODEL_LOG). */
  scriptedModelLog?: string | undefined;
  /** Told of a provider's 429, so flow control lowers that model's rate. */
  onRateLimited?: (model: string, retryAfterMs: number | undefined) => void;
}

/**
 * The model a planner decides with: code agents over the router of scripted plans and JSON agents. The one
 * wiring of the planner service, the worker and the dev stack.
 */
export function createPlannerModel(parts: PlannerModelParts): ServingModel {
  const { registry, codeAgents } = parts.agents;
  const { tools, payloads } = parts;
  return withCodeAgents({
    agents: codeAgents,
    tools,
    // ctx.model calls go through the LLM adapters with each agent's model settings, priced like JSON agents'.
    prices: registry.prices,
    continuations: createCodeContinuations({ max: parts.codeContinuations }),
    ...(parts.onRateLimited ? { onRateLimited: parts.onRateLimited } : {}),
    base: createModelRouter({
      scripted: createScriptedModel({
        payloads,
        ...(parts.scriptedModelLog ? { callLog: fileCallLog(parts.scriptedModelLog) } : {}),
      }),
      agents: createAgentModel({
        agents: registry,
        tools,
        payloads,
        ...(parts.onRateLimited ? { onRateLimited: parts.onRateLimited } : {}),
      }),
      tools,
    }),
  });
}
