import {
  CONTROL_TOOLS,
  DuraError,
  isControlTool,
  ToolNameSchema,
  type ApprovalPolicy,
  type Decision,
  type JsonObject,
  type PayloadRef,
  type PinnedVersion,
  type RunRequest,
  type ToolCall,
} from '@dura/contracts';
import { nextCallId, type CallState, type Reservation, type RunState } from '@dura/core';
import type { ToolRegistry } from '@dura/tools';
import { controlToolSpecs, liveOptions, toolSpecsFor, type ChatProvider, type ChatToolSpec } from '../llm';
import type {
  AgentCatalog,
  CallCosts,
  ContextSummaries,
  DecideInput,
  Model,
  ModelTurn,
  StartInfo,
  SummaryTurn,
} from '../model';
import { tighterBudget } from '../model';
import { definitionKey } from '../agent-concurrency';
import type { PayloadAccess } from '../payload-access';
import { withResolvedResults } from '../resolved-results';
import { scriptedTurn } from '../scripted-model';
import { buildConversation, callResultText, type ResultText } from './conversation';
import { callsOf, type ModelSettings } from './definition';
import { priceOf } from './model-price';
import { providerCache } from './provider-cache';
import type { AgentRegistry, ServedAgent } from './registry';

export interface AgentModelDeps {
  agents: AgentRegistry;
  tools: ToolRegistry;
  env?: Record<string, string | undefined>;
  payloads?: PayloadAccess;
  /** Builds the provider client of an agent's model settings (tests inject servers through `baseUrl`). */
  providerFor?: (settings: Extract<ModelSettings, { provider: 'openai' | 'anthropic' }>) => ChatProvider;
  /** Told of each 429 a provider answers (`provider/model`, its `Retry-After`): flow control lowers the rate. */
  onRateLimited?: (model: string, retryAfterMs: number | undefined) => void;
}

/** Above this share of the context window, older steps are summarized before the next call. */
export const SUMMARIZE_AT = 0.75;
/** The most recent decisions a summary always leaves as they are. */
export const KEEP_RECENT_TURNS = 2;

const SUMMARIZE_PROMPT =
  'You compress the history of an agent run. Summarize the steps below: what was done, what each tool ' +
  'returned that matters for the task, and what is still open. Keep facts, ids and numbers exact.';

/**
 * The model of registered agents: their prompt, provider and tools, pinned per run. Scripted agents answer
 * from their plan; OpenAI-compatible and Anthropic ones are called over HTTP with the conversation rebuilt
 * from the log, and their answer becomes a decision (tool calls, or the final answer).
 */
export function createAgentModel(deps: AgentModelDeps): Model & AgentCatalog & CallCosts & ContextSummaries {
  const providerOf = providerCache<Extract<ModelSettings, { provider: 'openai' | 'anthropic' }>>(
    deps.env ?? process.env,
    deps.providerFor,
    deps.onRateLimited &&
      ((target, retryAfterMs) => deps.onRateLimited?.(`${target.provider}/${target.model}`, retryAfterMs)),
  );

  function agentOf(state: RunState): ServedAgent {
    const pinned = state.pinned;
    if (!pinned)
      throw new DuraError('corrupt_run', `run ${state.runId ?? ''} names an agent but was never pinned`);
    const agent = deps.agents.get(pinned.agent, pinned.version);
    if (!agent || agent.promptVersion !== pinned.promptVersion) {
      throw new DuraError(
        'version_not_served',
        `run ${state.runId ?? ''} is pinned to ${pinned.agent}@${pinned.version} (prompt ${pinned.promptVersion}), ` +
          'which this planner does not serve',
        { retryable: true },
      );
    }
    return agent;
  }

  function toolSpecs(agent: ServedAgent): ChatToolSpec[] {
    return [...toolSpecsFor(deps.tools, agent.tools), ...(agent.controlTools ? controlToolSpecs() : [])];
  }

  async function resultTexts(state: RunState): Promise<(call: CallState) => ResultText> {
    const resolved = new Map<string, string>();
    const offloaded = state.calls.filter((call) => call.resultRef && call.status === 'completed');
    if (offloaded.length > 0 && !deps.payloads) {
      throw new DuraError(
        'payloads_unavailable',
        'a tool result is in the object store but the planner has no access to it',
      );
    }
    await Promise.all(
      offloaded.map(async (call) => {
        resolved.set(
          call.callId,
          await (deps.payloads as PayloadAccess).resolveText(call.resultRef as PayloadRef),
        );
      }),
    );
    return (call) => callResultText(call, resolved.get(call.callId));
  }

  function approvalFor(agent: ServedAgent, tool: string): ApprovalPolicy | undefined {
    // Tools defined with `requiresApproval` get theirs from the model router, for every kind of run.
    const policy = agent.approvals?.tools.includes(tool) ? agent.approvals : undefined;
    if (!policy) return undefined;
    return {
      onTimeout: policy.onTimeout ?? 'reject',
      ...(policy.timeoutSeconds === undefined ? {} : { timeoutSeconds: policy.timeoutSeconds }),
    };
  }

  async function toDecision(
    state: RunState,
    agent: ServedAgent,
    toolCalls: { name: string; arguments: JsonObject }[],
    content: string | undefined,
  ): Promise<Decision> {
    if (toolCalls.length === 0) return { kind: 'complete', output: content ?? '' };
    const calls = await Promise.all(
      toolCalls.map(async (call, index): Promise<ToolCall> => {
        const valid = ToolNameSchema.safeParse(call.name).success;
        const tool = valid ? call.name : 'dura.unknown_tool';
        const args: JsonObject = valid
          ? call.arguments
          : { requestedTool: call.name, arguments: call.arguments };
        const approval = isControlTool(tool) ? undefined : approvalFor(agent, tool);
        const ref = isControlTool(tool) ? undefined : await deps.payloads?.offloadArgs?.(args);
        return {
          callId: nextCallId(state, index),
          tool,
          args: ref ? { $payload: ref.uri } : args,
          ...(ref ? { argsRef: ref } : {}),
          ...(approval ? { approval } : {}),
        };
      }),
    );
    return { kind: 'tool_calls', calls };
  }

  return {
    start(request): StartInfo {
      if (request.agent.kind !== 'agent') return request.budget ? { budget: request.budget } : {};
      const agent = deps.agents.get(request.agent.name, request.agent.version);
      if (!agent) throw unknownAgent(deps.agents, request.agent.name, request.agent.version);
      const pinned: PinnedVersion = {
        agent: agent.name,
        version: agent.version,
        promptVersion: agent.promptVersion,
        provider: agent.model.provider,
        model: agent.model.model,
        tools: agent.tools,
        controlTools: agent.controlTools,
      };
      const budget = tighterBudget(agent.budget, request.budget);
      const key = definitionKey(agent.concurrency, request, `${agent.name}@${agent.version}`);
      return { pinned, ...(budget ? { budget } : {}), budgetPolicy: agent.onBudgetExceeded, ...key };
    },

    serves: (pinned) => deps.agents.serves(pinned),

    inputSecrets(name) {
      const agent = deps.agents.get(name.name, name.version);
      if (!agent) return undefined;
      return {
        declared: agent.secrets?.input ?? [],
        plan: agent.model.provider === 'scripted' ? agent.model.steps.flatMap(callsOf) : [],
      };
    },

    async reservation({ state }): Promise<Reservation> {
      const agent = agentOf(state);
      if (agent.model.provider === 'scripted') return { tokens: 0, costUsd: 0 };
      const conversation = buildConversation(state, agent.systemPrompt, await resultTexts(state));
      const usage = { inputTokens: conversation.estimatedTokens, outputTokens: agent.model.maxTokens };
      return {
        tokens: usage.inputTokens + usage.outputTokens,
        costUsd: priceOf(deps.agents.prices, agent.model.model, usage),
      };
    },

    async callCost({ state }) {
      const agent = agentOf(state);
      if (agent.model.provider === 'scripted') return undefined;
      const conversation = buildConversation(state, agent.systemPrompt, await resultTexts(state));
      return {
        model: `${agent.model.provider}/${agent.model.model}`,
        inputTokens: conversation.estimatedTokens,
        outputTokens: agent.model.maxTokens,
      };
    },

    async summarize({ state }): Promise<SummaryTurn | undefined> {
      const agent = agentOf(state);
      const settings = agent.model;
      if (settings.provider === 'scripted') return undefined;
      const conversation = buildConversation(state, agent.systemPrompt, await resultTexts(state));
      if (conversation.estimatedTokens <= settings.contextTokens * SUMMARIZE_AT) return undefined;
      const older = state.turns.slice(0, Math.max(0, state.turns.length - KEEP_RECENT_TURNS));
      const steps = older.flatMap((turn) =>
        turn.callIds.map((id) => state.calls.find((c) => c.callId === id)?.step ?? 0),
      );
      const throughStep = Math.max(0, ...steps);
      if (throughStep <= (state.summary?.throughStep ?? 0)) return undefined;
      const transcript = conversation.messages
        .filter(
          (message) => message.role === 'assistant' || message.role === 'tool' || message.role === 'user',
        )
        .map((message) => JSON.stringify(message))
        .join('\n');
      const response = await providerOf(settings).chat({
        model: settings.model,
        messages: [
          { role: 'system', content: SUMMARIZE_PROMPT },
          {
            role: 'user',
            content: `Steps 1 to ${throughStep} of the run (and what came after, for context):\n${transcript}`,
          },
        ],
        tools: [],
        maxTokens: settings.maxTokens,
      });
      return {
        throughStep,
        summary: response.content ?? '',
        usage: response.usage,
        model: { id: response.modelId, promptVersion: agent.promptVersion },
        costUsd: priceOf(deps.agents.prices, settings.model, response.usage),
      };
    },

    async decide({ state, request, live, signal, confirm }: DecideInput): Promise<ModelTurn> {
      const agent = agentOf(state);
      const settings = agent.model;
      if (settings.provider === 'scripted') {
        const resolved = await withResolvedResults(state, deps.payloads);
        const turn = scriptedTurn(resolved, settings.steps, settings.output, request.input);
        const decision: Decision =
          turn.decision.kind === 'tool_calls'
            ? {
                kind: 'tool_calls',
                calls: turn.decision.calls.map((call) => {
                  const approval = isControlTool(call.tool) ? undefined : approvalFor(agent, call.tool);
                  return approval ? { ...call, approval } : call;
                }),
              }
            : turn.decision;
        return { ...turn, decision, model: { id: settings.model, promptVersion: agent.promptVersion } };
      }
      const conversation = buildConversation(state, agent.systemPrompt, await resultTexts(state));
      await confirm?.();
      const response = await providerOf(settings).chat({
        model: settings.model,
        messages: conversation.messages,
        tools: toolSpecs(agent),
        maxTokens: settings.maxTokens,
        ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
        ...liveOptions(live, 0),
        ...(signal ? { signal } : {}),
      });
      const decision = await toDecision(state, agent, response.toolCalls, response.content);
      return {
        decision,
        ...(response.content === undefined ? {} : { content: response.content }),
        usage: response.usage,
        model: { id: response.modelId, promptVersion: agent.promptVersion },
        finishReason: response.finishReason,
        prompt: conversation.record,
        costUsd: priceOf(deps.agents.prices, settings.model, response.usage),
      };
    },
  };
}

export function unknownAgent(agents: AgentRegistry, name: string, version: string | undefined): DuraError {
  const served = agents.versions(name);
  if (served.length > 0) {
    return new DuraError(
      'unknown_agent_version',
      `agent ${name} has no version ${version ?? ''} here; served versions: ${served.join(', ')}`,
    );
  }
  const names = agents.names();
  return new DuraError(
    'unknown_agent',
    `no agent named ${name}; ${names.length > 0 ? `known agents: ${names.join(', ')}` : 'this planner has no agents (set DURA_AGENTS to an agents file)'}`,
  );
}

/** The control tool names, for documentation and tests. */
export const CONTROL_TOOL_NAMES = Object.values(CONTROL_TOOLS);

/** Whether the request runs a registered agent (as opposed to an inline scripted plan). */
export function isAgentRequest(request: RunRequest): boolean {
  return request.agent.kind === 'agent';
}
