import { DuraError, type Decision, type LiveText, type Usage } from '@dura/contracts';
import {
  budgetExceededEvents,
  budgetExcess,
  type EventDraft,
  type PlannerAction,
  type Reservation,
  type RunState,
} from '@dura/core';
import type {
  AgentCatalog,
  CallAdmission,
  CallWorstCase,
  CodeRuns,
  CodeTurn,
  DecideInput,
  ModelCallGate,
  ModelTurn,
  PlannerModel,
  SummaryTurn,
} from './model';

/**
 * What the planner appends next, and why. The one mapping from a decider action and a model turn to
 * events: the run driver appends it, replay compares it with the log, so the two cannot drift apart.
 */
export type PlannerStep =
  | {
      kind: 'start' | 'record' | 'over_budget' | 'reserve' | 'summary' | 'model_refused';
      drafts: EventDraft[];
    }
  | { kind: 'thought'; drafts: EventDraft[]; turn: ModelTurn }
  | { kind: 'none' };

export interface PlannerStepPorts {
  model: PlannerModel;
  /** The time budgets are checked at (the driver's clock; replay: the recorded event's time). */
  now: Date;
  /** Runs the model's calls (summary and answer); the driver wraps them in its decision span. */
  around?: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Asks the model for its answer; default `model.decide` (the driver adds a span and the live stream). */
  ask?: (input: DecideInput) => Promise<ModelTurn>;
  /**
   * Runs a code agent's step, whose model calls `ask` does not see, under a signal that aborts once another
   * replica recorded a decision past `state` (the driver's superseded watch, as `ask` does for a JSON agent's).
   */
  watched?: <T>(
    state: RunState,
    step: (signal: AbortSignal, confirm: () => Promise<void>) => Promise<T>,
  ) => Promise<T>;
  /** Seals the secret argument fields of a decision before it is recorded. */
  seal?: (decision: Decision, scope: string) => Decision;
  /** Streams a code agent's model answers as they come (the driver publishes them to `DURA_TOKENS`). */
  live?: LiveText;
  /**
   * Flow control, asked before each model call once its budget is reserved: `go`, or a wait for capacity that
   * is recorded instead of the call (a timer wait: the run holds nothing until then). Replay answers it from
   * the log. A code agent's call comes with its worst case (`cost`) and its place in the step (`call`); a
   * JSON agent's is estimated by the model.
   */
  admit?: (input: AdmitInput) => Promise<CallAdmission>;
  /**
   * The run's concurrency key, asked at the start of each decision, a code agent's as a JSON agent's (its
   * holder keeps it until the run ends): `go`, or a wait for the key recorded instead of the decision. Replay
   * answers it from the log.
   */
  hold?: (input: Pick<DecideInput, 'state' | 'request'>) => Promise<CallAdmission>;
}

/** The call flow control is asked about: the run, and for a code agent's call its worst case and place. */
export type AdmitInput = Pick<DecideInput, 'state' | 'request'> & { cost?: CallWorstCase; call?: number };

export type { CallAdmission };

/** Waits for capacity are timer waits whose id says so: `capacity:<decision>:<seq>`. */
export const CAPACITY_WAIT_PREFIX = 'capacity:';

/** What a run waiting for its concurrency key shows: `capacity of concurrency key customer:42 (limit 1)`. */
export function keyWaitReason(key: { key: string; limit: number }): string {
  return `capacity of concurrency key ${key.key} (limit ${key.limit})`;
}

/** Whether a wait for capacity is one for a concurrency key (see `keyWaitReason`). */
export function isKeyWait(reason: string | undefined): boolean {
  return reason?.startsWith('capacity of concurrency key ') ?? false;
}

/** The wait a run records when flow control does not admit its call now; a deadline ends it sooner. */
export function capacityWaitDraft(state: RunState, wait: { until: Date; reason: string }): EventDraft {
  const { limits, startedAt } = state.budget;
  const deadline =
    limits.maxWallSeconds !== undefined && startedAt !== null
      ? Date.parse(startedAt) + limits.maxWallSeconds * 1000 + 1
      : Infinity;
  const until = new Date(Math.min(wait.until.getTime(), deadline)).toISOString();
  const waitId = `${CAPACITY_WAIT_PREFIX}${state.decisions}:${state.lastSeq}`;
  return { type: 'wait_requested', data: { waitId, kind: 'timer', until, reason: wait.reason } };
}

const NOTHING: Reservation = { tokens: 0, costUsd: 0 };

/** The events the planner appends in `state` for `action` (the decider's `nextAction(state)`). */
export async function plannerStep(
  state: RunState,
  action: PlannerAction,
  ports: PlannerStepPorts,
): Promise<PlannerStep> {
  switch (action.kind) {
    case 'start':
      return { kind: 'start', drafts: [startDraft(state, ports.model)] };
    case 'record':
      return { kind: 'record', drafts: action.events };
    case 'decide':
      return decideStep(state, ports);
    case 'dispatch':
    case 'idle':
      return { kind: 'none' };
  }
}

/** `run_started` with what the model pins the run to; a run naming no agent served fails here instead. */
export function startDraft(state: RunState, model: Partial<Pick<AgentCatalog, 'start'>>): EventDraft {
  const request = state.request;
  if (!request) throw new DuraError('corrupt_run', `run ${state.runId ?? ''} has no recorded request`);
  try {
    return { type: 'run_started', data: model.start?.(request) ?? {} };
  } catch (err) {
    if (!(err instanceof DuraError) || err.retryable) throw err;
    return failedDraft(err);
  }
}

async function decideStep(state: RunState, ports: PlannerStepPorts): Promise<PlannerStep> {
  const { model } = ports;
  const request = state.request;
  if (!request)
    throw new DuraError('corrupt_run', `run ${state.runId ?? ''} is running but has no recorded request`);
  const input = { state, request };
  const held = (await ports.hold?.(input)) ?? { kind: 'go' };
  if (held.kind === 'wait') return { kind: 'record', drafts: [capacityWaitDraft(state, held)] };
  if (model.code && state.pinned?.provider === 'code') {
    const live = ports.live ? { live: ports.live } : {};
    const step = await codeStep(state, { ...input, ...live }, ports, model.code.bind(model));
    if (step) return step;
  }
  const reservation = (await model.reservation?.(input)) ?? { tokens: 0, costUsd: 0 };
  const excess = budgetExcess(state, reservation, ports.now);
  if (excess) return { kind: 'over_budget', drafts: budgetExceededEvents(state, excess) };
  // Journal the worst case before spending: a replica deciding the same run after a crash sees it.
  if (unreserved(state)) return { kind: 'reserve', drafts: [{ type: 'budget_reserved', data: reservation }] };
  const admission = (await ports.admit?.(input)) ?? { kind: 'go' };
  if (admission.kind === 'wait') return { kind: 'record', drafts: [capacityWaitDraft(state, admission)] };
  const settle = admission.settle ?? (() => Promise.resolve());
  const around = ports.around ?? (<T>(fn: () => Promise<T>) => fn());
  let used: Usage | undefined;
  let turn: ModelTurn | DuraError;
  try {
    const summary = await around(() => model.summarize?.(input) ?? Promise.resolve(undefined));
    used = summary?.usage;
    if (summary) return { kind: 'summary', drafts: [summaryDraft(summary)] };
    const ask = ports.ask ?? ((decide: DecideInput) => model.decide(decide));
    turn = await around(() => ask(input)).catch((err: unknown) => {
      if (!isFinalModelError(err)) throw err;
      return err;
    });
    if (!(turn instanceof DuraError)) used = turn.usage;
  } finally {
    // What the call did not use goes back to the limits; a failed call gives back only its slot.
    await settle(used);
  }
  const scope = state.correlationId ?? request.runId;
  // A request the provider refuses (4xx) or cannot answer sensibly will not get better by asking again:
  // the run fails with the provider's reason instead of retrying forever.
  if (turn instanceof DuraError) return { kind: 'model_refused', drafts: [failedDraft(turn)] };
  return { kind: 'thought', drafts: [thoughtDraft(state, turn, ports.seal, scope)], turn };
}

/** A metered run (tokens or cost) whose next model call has no reservation in the log yet. */
function unreserved(state: RunState): boolean {
  const { limits, reserved } = state.budget;
  return (limits.maxTokens !== undefined || limits.maxCostUsd !== undefined) && reserved === null;
}

/**
 * A code agent's step: the steps and time budgets first, then its code replayed; each `ctx.model` call is
 * let through `budget` (the JSON agents' rule: the worst case reserved in the log before the first call of a
 * decision, every call checked against the limits), then through flow control (`admit`) like a JSON agent's
 * call. Undefined when no code agent decides the run.
 */
async function codeStep(
  state: RunState,
  input: DecideInput,
  ports: PlannerStepPorts,
  decideCode: CodeRuns['code'],
): Promise<PlannerStep | undefined> {
  const excess = budgetExcess(state, NOTHING, ports.now);
  if (excess) return { kind: 'over_budget', drafts: budgetExceededEvents(state, excess) };
  const around = ports.around ?? (<T>(fn: () => Promise<T>) => fn());
  const budget = (call: Reservation, answered: Reservation): ModelCallGate => {
    const worst = { tokens: call.tokens + answered.tokens, costUsd: call.costUsd + answered.costUsd };
    const over = budgetExcess(state, worst, ports.now);
    if (over) return { kind: 'over_budget', excess: over };
    // Reserved once per decision: a replica resuming after a crash finds the reservation and asks.
    if (unreserved(state)) return { kind: 'reserve', reservation: call };
    return { kind: 'ask' };
  };
  const { admit } = ports;
  // Each call past the log is admitted under the model limits as a JSON agent's is, on its own worst case.
  const admitted = admit
    ? { admit: (cost: CallWorstCase, call: number) => admit({ ...input, cost, call }) }
    : {};
  type Step = (signal?: AbortSignal, confirm?: () => Promise<void>) => Promise<CodeTurn | undefined>;
  const watched = ports.watched ?? ((_: RunState, step: Step) => step());
  const code: CodeTurn | DuraError | undefined = await around(() =>
    watched(state, (signal?: AbortSignal, confirm?: () => Promise<void>) =>
      decideCode({
        ...input,
        budget,
        ...admitted,
        ...(signal ? { signal } : {}),
        ...(confirm ? { confirm } : {}),
      }),
    ),
  ).catch((err: unknown) => {
    if (!isFinalModelError(err)) throw err;
    return err;
  });
  if (code === undefined) return undefined;
  if (code instanceof DuraError) return { kind: 'model_refused', drafts: [failedDraft(code)] };
  switch (code.kind) {
    case 'suspended':
      return { kind: 'none' };
    case 'budget':
      return code.gate.kind === 'reserve'
        ? { kind: 'reserve', drafts: [{ type: 'budget_reserved', data: code.gate.reservation }] }
        : { kind: 'over_budget', drafts: budgetExceededEvents(state, code.gate.excess) };
    // Not admitted under a model limit: the run waits for capacity, holding nothing, and asks again then.
    case 'capacity':
      return { kind: 'record', drafts: [capacityWaitDraft(state, code.wait)] };
    // Code that asks for something the log did not record at that position: nothing runs past it.
    case 'blocked': {
      const waitId = `operator:code:${state.steps}`;
      const data = { waitId, kind: 'operator' as const, reason: code.reason };
      return { kind: 'record', drafts: [{ type: 'wait_requested', data }] };
    }
    case 'turn': {
      const scope = state.correlationId ?? input.request.runId;
      const drafts = [thoughtDraft(state, code.turn, ports.seal, scope)];
      return { kind: 'thought', drafts, turn: code.turn };
    }
  }
}

/** The `thought` that records a model turn verbatim (secret arguments sealed when a sealer is given). */
export function thoughtDraft(
  state: RunState,
  turn: ModelTurn,
  seal: PlannerStepPorts['seal'],
  scope: string,
): EventDraft {
  return {
    type: 'thought',
    data: {
      step: state.steps,
      model: turn.model,
      ...(turn.content === undefined ? {} : { content: turn.content }),
      decision: seal?.(turn.decision, scope) ?? turn.decision,
      usage: turn.usage,
      finishReason: turn.finishReason,
      ...(turn.prompt ? { prompt: turn.prompt } : {}),
      ...(turn.costUsd === undefined ? {} : { costUsd: turn.costUsd }),
    },
  };
}

function summaryDraft(summary: SummaryTurn): EventDraft {
  return {
    type: 'context_summarized',
    data: {
      throughStep: summary.throughStep,
      summary: summary.summary,
      model: summary.model,
      usage: summary.usage,
      ...(summary.costUsd === undefined ? {} : { costUsd: summary.costUsd }),
    },
  };
}

/** `run_failed` with the error's code and message. */
export function failedDraft(err: DuraError): EventDraft {
  return { type: 'run_failed', data: { error: { code: err.code, message: err.message } } };
}

/** Model failures a retry cannot fix: the provider refused the request, or kept answering nonsense. */
export function isFinalModelError(err: unknown): err is DuraError {
  return (
    err instanceof DuraError &&
    !err.retryable &&
    (err.code === 'model_request_rejected' || err.code === 'model_bad_response')
  );
}
