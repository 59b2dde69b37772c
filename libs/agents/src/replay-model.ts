import { DuraError, type RunEvent } from '@dura/contracts';
import { ToolRegistry } from '@dura/tools';
import type { RunState } from '@dura/core';
import type { AnyCodeAgent } from '@dura/code-agents';
import { createAgentModel } from './agents/agent-model';
import type { AgentRegistry } from './agents/registry';
import type { AgentCatalog, CallCosts, ContextSummaries, Model, PlannerModel, SummaryTurn } from './model';
import { createModelRouter } from './model-router';
import { createScriptedModel } from './scripted-model';
import { isPlannerEvent } from './replay-compare';
import { replayCodeAgents } from './replay-code';

export interface ReplayModelOptions {
  /** The agent definitions to check agent runs against (what the planner serves: `DURA_AGENTS`). */
  agents?: AgentRegistry;
  /**
   * The code agents (`defineAgent`) to re-run: a run of one is decided by its code against the log, with
   * the values and model answers its steps recorded; without them a code agent's run cannot be replayed.
   */
  codeAgents?: readonly AnyCodeAgent[];
  /** The tools, for the approvals their definitions require; default none. */
  tools?: ToolRegistry;
}

/**
 * The model replay asks by default. Deterministic code is asked again: scripted plans, and agents whose
 * provider is `scripted` when their definitions are given. An LLM's answer would differ run to run, so it is
 * answered from the thoughts the log recorded, which still checks everything the planner derives from them
 * (pinning, budgets, intents, keys, completions). With definitions, runs are pinned and budgeted by them, so
 * a changed agent shows at `run_started` or at the first step it decides differently; without, agent runs
 * keep the pin, reservations and summaries their log recorded. Code agents' runs are re-run with their code
 * (`codeAgents`, see `replayCodeAgents`).
 */
export function replayModelFor(events: readonly RunEvent[], options: ReplayModelOptions = {}): PlannerModel {
  const base = baseReplayModel(events, options);
  const { codeAgents, tools } = options;
  if (!codeAgents || codeAgents.length === 0) return base;
  // A ctx.model call's reservation is priced as the planner prices it: with the agents file's prices.
  const prices = options.agents?.prices;
  return replayCodeAgents({
    agents: codeAgents,
    base,
    events,
    ...(tools ? { tools } : {}),
    ...(prices ? { prices } : {}),
  });
}

function baseReplayModel(events: readonly RunEvent[], options: ReplayModelOptions): PlannerModel {
  const recorded = recordedModel(events);
  const scripted = createScriptedModel();
  if (!options.agents) {
    return {
      ...recorded,
      decide: (input) => (input.request.agent.kind === 'scripted' ? scripted : recorded).decide(input),
    };
  }
  const tools = options.tools ?? new ToolRegistry([]);
  const defined = createAgentModel({ agents: options.agents, tools, env: {} });
  const reAsked = (state: RunState): boolean =>
    state.request?.agent.kind !== 'agent' || state.pinned?.provider === 'scripted';
  const agents: PlannerModel = {
    ...defined,
    decide: (input) => (reAsked(input.state) ? defined : recorded).decide(input),
    summarize: (input) => (reAsked(input.state) ? Promise.resolve(undefined) : recorded.summarize(input)),
  };
  return createModelRouter({ scripted, agents, tools });
}

/**
 * A model that answers from the log: each call returns what the planner recorded next after the state's
 * last event (its pin, reservation, summary, thought, or the provider's refusal).
 */
export function recordedModel(
  events: readonly RunEvent[],
): Model & Pick<AgentCatalog, 'start'> & Pick<CallCosts, 'reservation'> & ContextSummaries {
  const nextPlannerEvent = (state: RunState): RunEvent | undefined =>
    events.find((event) => event.seq > state.lastSeq && isPlannerEvent(event));
  return {
    start: () => {
      const first = events.find(isPlannerEvent);
      if (first?.type === 'run_started') return first.data;
      // A run that failed to start (an agent not served) failed with the reason the planner gave then.
      if (first?.type === 'run_failed') throw new DuraError(first.data.error.code, first.data.error.message);
      return {};
    },
    reservation: ({ state }) => {
      const next = nextPlannerEvent(state);
      return Promise.resolve(next?.type === 'budget_reserved' ? next.data : { tokens: 0, costUsd: 0 });
    },
    summarize: ({ state }) => {
      const next = nextPlannerEvent(state);
      if (next?.type !== 'context_summarized') return Promise.resolve(undefined);
      const { throughStep, summary, model, usage, costUsd } = next.data;
      const turn: SummaryTurn = {
        throughStep,
        summary,
        model,
        usage,
        ...(costUsd === undefined ? {} : { costUsd }),
      };
      return Promise.resolve(turn);
    },
    decide: ({ state }) => {
      const next = nextPlannerEvent(state);
      const error = next?.type === 'run_failed' ? next.data.error : undefined;
      if (error && (error.code === 'model_request_rejected' || error.code === 'model_bad_response'))
        return Promise.reject(new DuraError(error.code, error.message));
      const thought = events.find((event) => event.type === 'thought' && event.seq > state.lastSeq);
      if (thought?.type !== 'thought')
        return Promise.reject(
          new DuraError('no_recorded_thought', `the log records no thought after seq ${state.lastSeq}`),
        );
      const { decision, content, usage, model, finishReason, prompt, costUsd } = thought.data;
      return Promise.resolve({
        decision,
        usage,
        model,
        finishReason,
        ...(content === undefined ? {} : { content }),
        ...(prompt === undefined ? {} : { prompt }),
        ...(costUsd === undefined ? {} : { costUsd }),
      });
    },
  };
}
