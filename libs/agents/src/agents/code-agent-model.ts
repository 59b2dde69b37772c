import { randomUUID } from 'node:crypto';
import { DuraError, type PinnedVersion, type RunRequest } from '@dura/contracts';
import {
  pinnedVersion,
  withModelAnswer,
  type AnyCodeAgent,
  type CodeStep,
  type Frontier,
  type ModelAnswer,
  type ModelRequest,
} from '@dura/code-agents';
import type { ToolRegistry } from '@dura/tools';
import { tighterBudget, type CodeTurn, type DecideInput, type Model } from '../model';
import { withToolApprovals } from '../model-router';
import { createCodeContinuations, type CodeContinuations } from './code-continuations';

export interface CodeAgentModelDeps {
  /** Every served version of every code agent. */
  agents: readonly AnyCodeAgent[];
  /** Decides every other run (JSON agents, scripted plans). */
  base: Model;
  /** Answers `ctx.model`; without it a code agent that calls `ctx.model` fails with a reason. */
  answer?: (request: ModelRequest, input: DecideInput) => Promise<ModelAnswer>;
  clock?: () => Date;
  /** The deployment's tools: a call of one defined with `requiresApproval` waits for its approval, as for any agent. */
  tools?: ToolRegistry;
  /** The runs' suspended continuations (default: up to 1000 runs kept); losing one costs a replay. */
  continuations?: CodeContinuations;
}

const byVersion = new Intl.Collator('en', { numeric: true }).compare;

/**
 * The planner's model with code agents served next to the base model's: a run of a code agent is pinned to
 * the version it started with and decided by replaying its code against the log; the usual step resumes
 * the run's kept execution instead (`continuations`), a cold one replays from the start.
 */
export function withCodeAgents(deps: CodeAgentModelDeps): Model {
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
    // A step may ask the model several times before it needs the log again: each answer joins the frontier.
    for (;;) {
      const step: CodeStep = await continuations.advance(agent, input.state, {
        fresh,
        ...(frontier ? { frontier } : {}),
      });
      switch (step.kind) {
        case 'suspended':
          return { kind: 'suspended' };
        case 'blocked':
          return { kind: 'blocked', reason: step.error.message };
        case 'decide': {
          const { thought } = step;
          return {
            kind: 'turn',
            turn: withToolApprovals(
              {
                decision: thought.decision,
                ...(thought.content === undefined ? {} : { content: thought.content }),
                usage: thought.usage,
                model: thought.model,
                finishReason: thought.finishReason,
                ...(thought.costUsd === undefined ? {} : { costUsd: thought.costUsd }),
              },
              deps.tools,
            ),
          };
        }
        case 'model': {
          if (!deps.answer)
            throw new DuraError(
              'model_request_rejected',
              `code agent ${agent.name}@${agent.version} called ctx.model, but this planner has no model ` +
                'for code agents; serve ctx.model or remove the call',
            );
          frontier = withModelAnswer(step, await deps.answer(step.request, input));
          break;
        }
      }
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
      return { pinned: pinnedVersion(agent), ...(budget ? { budget } : {}) };
    },
    serves: (pinned: PinnedVersion) =>
      pinned.provider === 'code'
        ? find(pinned.agent, pinned.version) !== undefined
        : (base.serves?.(pinned) ?? false),
    reservation: (input) =>
      agentOf(input)
        ? Promise.resolve({ tokens: 0, costUsd: 0 })
        : (base.reservation?.(input) ?? Promise.resolve({ tokens: 0, costUsd: 0 })),
    summarize: (input) =>
      agentOf(input) ? Promise.resolve(undefined) : (base.summarize?.(input) ?? Promise.resolve(undefined)),
    code,
    finished: (runId) => {
      continuations.drop(runId);
      base.finished?.(runId);
    },
  };
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
