import type { EventData } from '@dura/contracts';
import type { ResolvedModelRequest } from './model-request';
import type { NonDeterminism, NotDrivenByCtx } from './errors';
import type { JournalEntry } from './journal';
import type { ModelCall } from './model-call';

/**
 * What a model step asks: the agent's model with `request` (`ctx.model`), or a framework's `call` made in
 * place (`ctx.modelCall`).
 */
export type ModelAsk =
  { request: ResolvedModelRequest; call?: undefined } | { call: ModelCall; request?: undefined };

/** Where fresh values come from when the code asks for one past the recorded frontier. */
export interface Fresh {
  /** Milliseconds since the epoch. */
  now(): number;
  /** A number in [0, 1). */
  random(): number;
  uuid(): string;
}

/**
 * What the planner must do next for a code agent's run:
 * - `decide`: append this thought (its decision is tool calls, completion or failure; the follow-up events
 *   are derived from it as for any agent);
 * - `model`: reserve the budget, ask the model `request` (the agent's settings applied) or invoke `call`, then advance again
 *   with `frontier` plus the answer (`withModelAnswer`); nothing is recorded yet;
 * - `suspended`: the code awaits recorded calls that have not resolved yet;
 * - `blocked`: the code cannot be driven by the log (non-determinism, or a wait on something not from ctx);
 *   the run waits for an operator and nothing runs.
 */
export type CodeStep =
  | { kind: 'decide'; thought: EventData<'thought'> }
  | ({ kind: 'model'; requestHash: string; frontier: Frontier } & ModelAsk)
  | { kind: 'suspended'; waitingOn: string[] }
  | { kind: 'blocked'; error: NonDeterminism | NotDrivenByCtx };

/**
 * What the step past the log has computed so far, unrecorded. Keyed by the step's index, so a frontier
 * kept after the log moved on (another replica recorded the step) is ignored, never misread.
 */
export interface Frontier {
  step: number;
  entries: readonly JournalEntry[];
}

export interface AdvanceOptions {
  fresh: Fresh;
  /** Values the frontier step already computed (from a `model` step), not yet recorded. */
  frontier?: Frontier;
}
