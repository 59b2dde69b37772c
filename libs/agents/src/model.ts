import type {
  BudgetLimits,
  ConcurrencyKey,
  LiveText,
  Decision,
  PinnedVersion,
  PromptRecord,
  RunRequest,
  ScriptedStep,
  Usage,
} from '@dura/contracts';
import type { BudgetExcess, Reservation, RunState } from '@dura/core';

/** What one model call produced; recorded verbatim in a `thought` before anything acts on it. */
export interface ModelTurn {
  decision: Decision;
  content?: string;
  usage: Usage;
  model: { id: string; promptVersion: string };
  finishReason: string;
  /** The call's input, content-addressed (only what is new since the previous recorded input). */
  prompt?: PromptRecord;
  costUsd?: number;
}

/** A summary of older steps, recorded before a call whose input would outgrow the model's context. */
export interface SummaryTurn {
  throughStep: number;
  summary: string;
  usage: Usage;
  model: { id: string; promptVersion: string };
  costUsd?: number;
}

export interface DecideInput {
  state: RunState;
  request: RunRequest & { runId: string };
  /** Streams the text of the decision's model calls while the model answers (to `DURA_TOKENS`); never recorded. */
  live?: LiveText;
  /**
   * Aborts the model call when its answer is no longer wanted (another replica recorded the decision this
   * call would make): no further attempt is made.
   */
  signal?: AbortSignal;
  /**
   * Asked right before each request to a model provider leaves: rejects (retryable) when another replica
   * recorded the decision meanwhile, or when the run's log cannot be read to tell. A replica with a stale
   * view of the run, or cut off from its log, then asks no model for a decision that may be recorded already.
   */
  confirm?: () => Promise<void>;
  /**
   * The run's budgets, asked before each model call a code agent makes (`call`: its worst case; `answered`:
   * what the step's earlier answers spent, not recorded yet). The planner applies the JSON agents' rule.
   */
  budget?: (call: Reservation, answered: Reservation) => ModelCallGate;
  /**
   * Flow control, asked before each model call a code agent makes once its budget lets it (`call`: its
   * worst case under the model limits; `k`: which call of the step it is): `go`, then `settle` with what the
   * call used, or a wait for capacity the planner records instead of the call.
   */
  admit?: (call: CallWorstCase, k: number) => Promise<CallAdmission>;
}

/** Flow control's answer before a model call: go (then `settle` with what it used), or wait until `until`. */
export type CallAdmission =
  | { kind: 'go'; settle?: (used: Usage | undefined) => Promise<void> }
  | { kind: 'wait'; until: Date; reason: string };

/** Whether a model call may be made now: `ask`; `reserve` (record the reservation first); `over_budget`. */
export type ModelCallGate =
  | { kind: 'ask' }
  | { kind: 'reserve'; reservation: Reservation }
  | { kind: 'over_budget'; excess: BudgetExcess };

/** What flow control admits a model call on: its model and the tokens it may use at most. */
export interface CallWorstCase {
  /** `provider/model`, as model limits name it. */
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/** What a run is started under: recorded in `run_started`, so every later decision uses the same. */
export interface StartInfo {
  pinned?: PinnedVersion;
  budget?: BudgetLimits;
  budgetPolicy?: 'fail' | 'wait';
  /** The agent definition's concurrency key, filled from the run's input (absent when the request names one). */
  concurrency?: ConcurrencyKey;
}

/** Where a registered agent's run holds secrets in its input, as the agent's definition tells. */
export interface InputSecrets {
  /** Input paths the agent declares secret (`secrets: { input: ["card.token"] }`). */
  declared: readonly string[];
  /**
   * A scripted agent's plan, parallel groups flattened (empty for other agents): the planner follows its
   * `"$input…"` references to the fields tools declare secret.
   */
  plan: readonly ScriptedStep[];
}

/**
 * The planner's only door to a model: what every model does. Implementations may do I/O; the state they get
 * is the folded log. What only some models do is a capability port of its own (below), which a model has as
 * a whole or not at all; the planner is given a `PlannerModel`.
 */
export interface Model {
  decide(input: DecideInput): Promise<ModelTurn>;
}

/** A model of registered agents: which agents and versions it serves, and what a run of one is started under. */
export interface AgentCatalog {
  /** The version and budgets a new run is pinned to; throws a DuraError when the request names no agent served. */
  start(request: RunRequest & { runId: string }): StartInfo;
  /** Whether this planner may decide a run pinned to `pinned` (a rolling deploy never mixes brains mid-run). */
  serves(pinned: PinnedVersion): boolean;
  /**
   * Where a run of the registered agent `agent` (at `version`, else the newest served) holds secrets in its
   * input; undefined when this planner serves no such agent.
   */
  inputSecrets(agent: { name: string; version?: string }): InputSecrets | undefined;
}

/** A model whose calls cost: the next call's worst case, for the run's budgets and for flow control. */
export interface CallCosts {
  /** The worst case of the next call, reserved against the run's budgets before it is made (not code runs'). */
  reservation(input: DecideInput): Promise<Reservation>;
  /**
   * The next call's worst case for flow control: `provider/model`, the input it sends and the most it may
   * answer (undefined: the call is not counted against model limits, e.g. a scripted agent's).
   */
  callCost(input: DecideInput): Promise<CallWorstCase | undefined>;
}

/** A model with a context window: a summary to record first, when the next call's input would outgrow it. */
export interface ContextSummaries {
  summarize(input: DecideInput): Promise<SummaryTurn | undefined>;
}

/** A model that serves code agents: their runs' next step, and what it keeps in memory for a run. */
export interface CodeRuns {
  /**
   * A run of a code agent: what its code does next (undefined for any other run, which `decide` answers).
   * `turn`: record it as the thought; `blocked`: open an operator wait with `reason`; `suspended`: nothing;
   * `budget`: what `input.budget` said before a model call (record the reservation, or the excess);
   * `capacity`: what `input.admit` said instead of letting a model call go (record the wait).
   */
  code(input: DecideInput): Promise<CodeTurn | undefined>;
  /** The run is finished (completed, failed or cancelled): whatever is kept in memory for it can go. */
  finished(runId: string): void;
}

/**
 * The model a planner decides with: `decide`, and whichever capabilities it has. Without one the planner
 * does without: every request starts unpinned, no pin is served, no call is reserved, counted or summarized,
 * and no run is a code agent's.
 */
export type PlannerModel = Model & Partial<AgentCatalog & CallCosts & ContextSummaries & CodeRuns>;

/** The model of the planner service, the worker and the dev stack: every capability. */
export type ServingModel = Model & AgentCatalog & CallCosts & ContextSummaries & CodeRuns;

export type CodeTurn =
  | { kind: 'turn'; turn: ModelTurn }
  | { kind: 'blocked'; reason: string }
  | { kind: 'suspended' }
  | { kind: 'budget'; gate: Exclude<ModelCallGate, { kind: 'ask' }> }
  | { kind: 'capacity'; wait: { until: Date; reason: string } };

/** The lower of two limits per budget: a request may tighten its agent's budgets, never loosen them. */
export function tighterBudget(
  agent: BudgetLimits | undefined,
  request: BudgetLimits | undefined,
): BudgetLimits | undefined {
  if (!agent) return request;
  if (!request) return agent;
  const keys = ['maxSteps', 'maxTokens', 'maxCostUsd', 'maxWallSeconds'] as const;
  const merged: BudgetLimits = {};
  for (const key of keys) {
    const values = [agent[key], request[key]].filter((v): v is number => v !== undefined);
    if (values.length > 0) merged[key] = Math.min(...values);
  }
  return merged;
}

/**
 * The version a run of `agent` would be pinned to under `request` (the newest served when it names none);
 * undefined when this planner serves no such agent.
 */
export function pinnedVersionOf(
  model: Partial<Pick<AgentCatalog, 'start'>> | undefined,
  request: RunRequest & { runId: string },
  agent: { name: string; version?: string },
): string | undefined {
  try {
    return model?.start?.({ ...request, agent: { kind: 'agent', ...agent } }).pinned?.version;
  } catch {
    return undefined;
  }
}
