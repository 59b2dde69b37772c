import { randomUUID } from 'node:crypto';
import { DuraError, type PinnedVersion, type RunRequest } from '@dura/contracts';
import {
  type AnyCodeAgent,
  type CodeModelSettings,
  type ModelAnswer,
  type ModelCall,
} from '@dura/code-agents';
import {
  ModelAnswerSchema,
  pinnedVersion,
  withModelAnswer,
  type CodeStep,
  type Frontier,
  type ResolvedModelRequest,
} from '@dura/code-agents/engine';
import type { Reservation } from '@dura/core';
import type { ToolRegistry } from '@dura/tools';
import type { ChatProvider } from '../llm';
import {
  tighterBudget,
  type CodeTurn,
  type DecideInput,
  type PlannerModel,
  type ServingModel,
} from '../model';
import { definitionKey } from '../agent-concurrency';
import { createCodeModelAnswer } from './code-model-answer';
import type { ModelPrice } from './definition';
import { createCodeContinuations, type CodeContinuations } from './code-continuations';
import { codeTurnOf } from './code-turn';
import { chainedPrompt, earlierPrompts } from './code-prompt';

export interface CodeAgentModelDeps {
  /** Every served version of every code agent. */
  agents: readonly AnyCodeAgent[];
  /** Decides every other run (JSON agents, scripted plans). */
  base: PlannerModel;
  /**
   * Answers `ctx.model` in place of the agent's provider (replay answers from the log); by default the LLM
   * adapters are asked with the agent's `model` settings.
   */
  answer?: (
    request: ResolvedModelRequest,
    input: DecideInput,
    agent: AnyCodeAgent,
    call?: number,
  ) => Promise<ModelAnswer>;
  /**
   * Answers a framework's call made in place (`ctx.modelCall`) instead of invoking it (replay answers from
   * the log); by default the call is invoked, streaming to the run's live tokens, and priced.
   */
  inPlace?: (call: ModelCall, input: DecideInput, agent: AnyCodeAgent, k?: number) => Promise<ModelAnswer>;
  clock?: () => Date;
  /**
   * The deployment's tools: a call of one defined with `requiresApproval` waits for its approval, as for any
   * agent; a `ctx.model` request's `tools` are described to the model with their schemas.
   */
  tools?: ToolRegistry;
  /** Prices by model id (the agents file's `prices`): a `ctx.model` call's cost and its reservation. */
  prices?: Record<string, ModelPrice>;
  env?: Record<string, string | undefined>;
  /** Builds the provider client of a code agent's model settings (tests inject an in-process one). */
  providerFor?: (settings: CodeModelSettings) => ChatProvider;
  /** The runs' suspended continuations (default: up to 1000 runs kept); losing one costs a replay. */
  continuations?: CodeContinuations;
  /** Told of each 429 a `ctx.model` call meets (`provider/model`, its `Retry-After`): flow control lowers the rate. */
  onRateLimited?: (model: string, retryAfterMs: number | undefined) => void;
}

const NOTHING: Reservation = { tokens: 0, costUsd: 0 };

const byVersion = new Intl.Collator('en', { numeric: true }).compare;

/**
 * The planner's model with code agents served next to the base model's: a run of a code agent is pinned to
 * the version it started with and decided by replaying its code against the log; the usual step resumes
 * the run's kept execution instead (`continuations`), a cold one replays from the start.
 */
export function withCodeAgents(deps: CodeAgentModelDeps): ServingModel {
  const { base } = deps;
  const versions = new Map<string, AnyCodeAgent[]>();
  for (const agent of deps.agents) {
    const list = versions.get(agent.name) ?? [];
    if (list.some((a) => a.version === agent.version))
      throw new DuraError(
        'invalid_agents',
        `code agent ${agent.name} version ${agent.version} is defined twice`,
      );
    list.push(agent);
    list.sort((a, b) => byVersion(a.version, b.version));
    versions.set(agent.name, list);
  }
  const clock = deps.clock ?? (() => new Date());
  const models = createCodeModelAnswer({
    ...(deps.tools ? { tools: deps.tools } : {}),
    ...(deps.prices ? { prices: deps.prices } : {}),
    ...(deps.env ? { env: deps.env } : {}),
    ...(deps.providerFor ? { providerFor: deps.providerFor } : {}),
    ...(deps.onRateLimited ? { onRateLimited: deps.onRateLimited } : {}),
  });
  const answer = deps.answer ?? models.answer;
  const inPlace = deps.inPlace ?? models.inPlace;
  const continuations = deps.continuations ?? createCodeContinuations();

  function find(name: string, version?: string): AnyCodeAgent | undefined {
    const list = versions.get(name);
    return version === undefined ? list?.at(-1) : list?.find((a) => a.version === version);
  }

  /** The code agent a run is pinned to; undefined when the run is not a code agent's. */
  function agentOf(input: DecideInput): AnyCodeAgent | undefined {
    const pinned = input.state.pinned;
    if (!pinned || pinned.provider !== 'code') return undefined;
    return find(pinned.agent, pinned.version);
  }

  function startsCode(request: RunRequest): boolean {
    return request.agent.kind === 'agent' && versions.has(request.agent.name);
  }

  /** A step that throws (the model call failed, say) leaves the run's execution mid-step: it is dropped. */
  function code(input: DecideInput): Promise<CodeTurn | undefined> {
    return decideCode(input).catch((err: unknown) => {
      continuations.drop(input.request.runId);
      throw err;
    });
  }

  async function decideCode(input: DecideInput): Promise<CodeTurn | undefined> {
    const agent = agentOf(input);
    if (!agent) return undefined;
    const fresh = { now: () => clock().getTime(), random: Math.random, uuid: randomUUID };
    let frontier: Frontier | undefined;
    // What the step's answers so far spent: a further call of the same step is checked with it.
    const answered = { ...NOTHING };
    // A step may ask the model several times before it needs the log again: each answer joins the frontier.
    for (;;) {
      const step: CodeStep = await continuations.advance(agent, input.state, {
        fresh,
        ...(frontier ? { frontier } : {}),
      });
      if (step.kind !== 'model') return codeTurnOf(step, deps.tools);
      // Budget before spending: the reservation is in the log before the provider is asked.
      const worst = step.call ? models.worstCaseOf(step.call) : models.worstCase(step.request, agent);
      const gate = input.budget?.(worst, answered) ?? { kind: 'ask' };
      if (gate.kind !== 'ask') return { kind: 'budget', gate };
      // The step's k-th model call: its live text is tagged with k, as the thought will journal it.
      const call = frontier?.entries.filter((entry) => entry.k === 'model').length ?? 0;
      // Then the model limits, as for a JSON agent's call: a call not admitted now is not made.
      const cost = input.admit ? models.limitCost(step, agent) : undefined;
      const admission = cost && input.admit ? await input.admit(cost, call) : undefined;
      if (admission?.kind === 'wait')
        return { kind: 'capacity', wait: { until: admission.until, reason: admission.reason } };
      let used: ModelAnswer['usage'] | undefined;
      let reply: ModelAnswer;
      try {
        await input.confirm?.();
        const asked = step.call
          ? inPlace(step.call, input, agent, call)
          : answer(step.request, input, agent, call);
        reply = recordable(await asked, agent);
        used = reply.usage;
      } finally {
        // What the call did not use goes back to the limits; a failed call gives back only its slot.
        await admission?.settle?.(used);
      }
      answered.tokens += reply.usage.inputTokens + reply.usage.outputTokens;
      answered.costUsd += reply.costUsd ?? 0;
      // What it was sent is recorded with the answer, chained onto the run's earlier prompts; a framework's
      // call keeps its prompt in its own shape, hashed in the request, and records none.
      const prompt = step.request
        ? chainedPrompt(step.request.messages, earlierPrompts(input.state, step.frontier.entries))
        : undefined;
      frontier = withModelAnswer(step, reply, prompt);
    }
  }

  return {
    decide: (input) => base.decide(input),
    start: (request) => {
      if (!startsCode(request) || request.agent.kind !== 'agent') return base.start?.(request) ?? {};
      const agent = find(request.agent.name, request.agent.version);
      if (!agent)
        throw new DuraError(
          'unknown_agent',
          `code agent ${request.agent.name} has no version ${request.agent.version ?? ''}; ` +
            `this planner serves ${(versions.get(request.agent.name) ?? []).map((a) => a.version).join(', ')}`,
        );
      const budget = tighterBudget(agent.budget, request.budget);
      return {
        pinned: pinnedVersion(agent),
        ...(budget ? { budget } : {}),
        ...(agent.onBudgetExceeded ? { budgetPolicy: agent.onBudgetExceeded } : {}),
        ...definitionKey(agent.concurrency, request, `${agent.name}@${agent.version}`),
      };
    },
    inputSecrets: (name) => {
      if (!versions.has(name.name)) return base.inputSecrets?.(name);
      const agent = find(name.name, name.version);
      return agent ? { declared: agent.secrets?.input ?? [], plan: [] } : undefined;
    },
    serves: (pinned: PinnedVersion) =>
      pinned.provider === 'code'
        ? find(pinned.agent, pinned.version) !== undefined
        : (base.serves?.(pinned) ?? false),
    // A code run's model calls are reserved one by one as its code makes them (`input.budget` in `code`).
    reservation: (input) =>
      agentOf(input)
        ? Promise.resolve({ tokens: 0, costUsd: 0 })
        : (base.reservation?.(input) ?? Promise.resolve({ tokens: 0, costUsd: 0 })),
    callCost: (input) =>
      agentOf(input) ? Promise.resolve(undefined) : (base.callCost?.(input) ?? Promise.resolve(undefined)),
    summarize: (input) =>
      agentOf(input) ? Promise.resolve(undefined) : (base.summarize?.(input) ?? Promise.resolve(undefined)),
    code,
    finished: (runId) => {
      continuations.drop(runId);
      base.finished?.(runId);
    },
  };
}

/** The answer as the journal can hold it; one it cannot would be lost on replay, so the run fails instead. */
function recordable(answer: ModelAnswer, agent: AnyCodeAgent): ModelAnswer {
  const checked = ModelAnswerSchema.safeParse(answer);
  if (checked.success) return answer;
  throw new DuraError(
    'model_bad_response',
    `the model's answer to ctx.model of ${agent.name}@${agent.version} cannot be recorded: ${checked.error.message}`,
  );
}

/** The code agents a module exports (named or default, alone or in an array), made with `defineAgent`. */
export function codeAgentsOf(module: Record<string, unknown>): AnyCodeAgent[] {
  const found = new Set<AnyCodeAgent>();
  for (const value of Object.values(module))
    for (const item of Array.isArray(value) ? value : [value]) if (isCodeAgent(item)) found.add(item);
  return [...found];
}

export function isCodeAgent(value: unknown): value is AnyCodeAgent {
  return (
    value !== null &&
    typeof value === 'object' &&
    (value as { kind?: unknown }).kind === 'code' &&
    typeof (value as { run?: unknown }).run === 'function'
  );
}
