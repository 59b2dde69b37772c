import { DuraError, type PinnedVersion, type RunEvent } from '@dura/contracts';
import type { RunState } from '@dura/core';
import { NonDeterminism, type AnyCodeAgent, type ModelAnswer } from '@dura/code-agents';
import {
  decideNext,
  decodeJournal,
  type CodeStep,
  type Fresh,
  type Frontier,
  type JournalEntry,
} from '@dura/code-agents/engine';
import type { ToolRegistry } from '@dura/tools';
import { withCodeAgents } from './agents/code-agent-model';
import type { CodeContinuations } from './agents/code-continuations';
import type { ModelPrice } from './agents/definition';
import type { PlannerModel, ServingModel } from './model';
import { entryText } from './replay-code-divergence';

export interface ReplayCodeDeps {
  /** The code agents to re-run (the module given to `dura replay --agents`). */
  agents: readonly AnyCodeAgent[];
  /** Decides every other run (JSON agents, scripted plans). */
  base: PlannerModel;
  /** The run's log: each step's recorded values (`ctx.now()`, `ctx.random()`, `ctx.uuid()`, `ctx.model`). */
  events: readonly RunEvent[];
  tools?: ToolRegistry;
  /** Prices by model id (the agents file's `prices`): what a `ctx.model` call's reservation is priced at. */
  prices?: Record<string, ModelPrice>;
}

/**
 * The planner's model for replaying a code agent's run: the planner's own `withCodeAgents`, so pinning,
 * budgets, the gate before each `ctx.model` call (the `budget_reserved` the planner appends before a
 * step's first call on a metered run, or `budget_exceeded`) and the mapping of a step to its turn are the
 * driver's, not a copy. Only where values come from differs: each step is re-run from the start against the
 * log prefix (no continuation is kept), with the values its thought recorded standing in for fresh ones,
 * and each `ctx.model` call let through the gate is answered with the answer the step recorded at that
 * position (no model is asked). A call the step did not record, or whose request hash differs from the
 * recorded one, is non-determinism, which `plannerStep` turns into the operator wait the driver would append.
 */
export function replayCodeAgents(deps: ReplayCodeDeps): ServingModel {
  const recorded = recordedSteps(deps.events);
  return withCodeAgents({
    agents: deps.agents,
    base: deps.base,
    ...(deps.tools ? { tools: deps.tools } : {}),
    ...(deps.prices ? { prices: deps.prices } : {}),
    env: {},
    continuations: recorded.steps,
    answer: () => recorded.answer(),
    inPlace: () => recorded.answer(),
  });
}

/** Stand-ins for values past what the step recorded: the thought then differs from the log's. */
const UNRECORDED: Fresh = { now: () => 0, random: () => 0, uuid: () => 'unrecorded' };

/**
 * Steps of a code agent's run as the log recorded them, in the place of the planner's continuation cache:
 * `steps.advance` re-runs the code with the step's recorded values up to its next recorded model call, and
 * returns that call (its recorded answer held for `answer`) only when the code asks it at the same position
 * with the same request hash; otherwise the step blocks, naming the call.
 */
function recordedSteps(events: readonly RunEvent[]): {
  steps: CodeContinuations;
  answer: () => Promise<ModelAnswer>;
} {
  let held: Promise<ModelAnswer> | undefined;
  const stats = { warm: 0, cold: 0 };

  async function advance(
    agent: AnyCodeAgent,
    state: RunState,
    frontier: Frontier | undefined,
  ): Promise<CodeStep> {
    held = undefined;
    const { entries: recorded, refused } = recordedStep(events, state);
    const step = state.turns.length;
    // The values the step computed so far (recorded ones and the answers given); then the recorded values
    // up to the next recorded model call, which must be asked through the gate like the driver's.
    const end = nextModelAt(recorded, frontier?.step === step ? frontier.entries.length : 0);
    const replayed = (upTo: number) =>
      decideNext(agent, state, { fresh: UNRECORDED, frontier: { step, entries: recorded.slice(0, upTo) } });
    stats.cold += 1;
    const found = await replayed(end);
    if (found.kind !== 'model') return found;
    const slot = found.frontier.entries.length;
    const entry = recorded[slot];
    if (slot === end && entry?.k === 'model' && entry.h === found.requestHash) {
      held = Promise.resolve(entry.a);
      return found;
    }
    // The provider refused the step's call and the run failed with its reason: asked again, it refuses again.
    if (refused && entry === undefined) {
      held = Promise.reject(refused);
      held.catch(() => undefined);
      return found;
    }
    // The code asks the model where the step recorded something else: the engine names it against the record.
    const checked = await replayed(slot + 1);
    if (checked.kind !== 'model') return checked;
    const at = checked.frontier.entries.length;
    const position = `step ${step + 1} of ${agent.name}@${agent.version} (run ${state.runId ?? ''})`;
    const was = `${entryText(recorded[at])} (value ${at + 1} of the step)`;
    const now = `ctx.model (request ${checked.requestHash.slice(0, 12)})`;
    return { kind: 'blocked', error: new NonDeterminism(position, was, now) };
  }

  return {
    steps: {
      advance: (agent, state, options) => advance(agent, state, options.frontier),
      drop: () => undefined,
      size: 0,
      stats,
    },
    answer: () => {
      const answer = held;
      held = undefined;
      if (answer) return answer;
      return Promise.reject(
        new DuraError('no_recorded_answer', 'replay was asked for a model answer its log did not record'),
      );
    },
  };
}

/** The index of the first model answer at or after `from` in a step's journal, or its length. */
function nextModelAt(entries: readonly JournalEntry[], from: number): number {
  const at = entries.findIndex((entry, i) => i >= from && entry.k === 'model');
  return at === -1 ? entries.length : at;
}

/**
 * What the step after `state` recorded: the journal of the next thought in the log (reservations, summaries,
 * budget waits and signals may come before it), or the provider's refusal the run failed with instead (the
 * answers the step had by then were never recorded).
 */
function recordedStep(
  events: readonly RunEvent[],
  state: RunState,
): { entries: JournalEntry[]; refused?: DuraError } {
  const next = events.find(
    (event) => event.seq > state.lastSeq && (event.type === 'thought' || event.type === 'run_failed'),
  );
  if (next?.type === 'thought') return { entries: decodeJournal(next.data.content) };
  const error = next?.type === 'run_failed' ? next.data.error : undefined;
  if (error && (error.code === 'model_request_rejected' || error.code === 'model_bad_response'))
    return { entries: [], refused: new DuraError(error.code, error.message) };
  return { entries: [] };
}

/** What `run_started` pinned a run of a code agent to; undefined for any other run. */
export function codeAgentRunOf(events: readonly RunEvent[]): PinnedVersion | undefined {
  const started = events.find((event) => event.type === 'run_started');
  const pinned = started?.type === 'run_started' ? started.data.pinned : undefined;
  return pinned?.provider === 'code' ? pinned : undefined;
}

/** Why a code agent's run cannot be replayed with `agents`: its code is not among them. */
export function codeAgentMissing(
  runId: string,
  pinned: PinnedVersion,
  agents: readonly Pick<AnyCodeAgent, 'name' | 'version'>[] | undefined,
): DuraError {
  const ran = `run ${runId} ran code agent ${pinned.agent}@${pinned.version}`;
  if (agents === undefined)
    return new DuraError(
      'code_agent_not_given',
      `${ran}: its steps come from the agent's code, which replay re-runs against the log and cannot check ` +
        'without it; pass the module that defines it (dura replay <run> --agents <module>, as DURA_AGENTS)',
    );
  const defined = agents.map((a) => `${a.name}@${a.version}`).join(', ') || 'no code agent';
  return new DuraError(
    'code_agent_not_given',
    `${ran}, which the given agents do not define (they define ${defined}); ` +
      'pass the module that defines that version',
  );
}
