import type { RunEvent } from '@dura/contracts';
import {
  evolve,
  fold,
  initialRunState,
  InvalidTransition,
  nextAction,
  type EventDraft,
  type RunState,
} from '@dura/core';
import type { PlannerModel } from './model';
import { CAPACITY_WAIT_PREFIX, isKeyWait, plannerStep, type CallAdmission } from './planner-step';
import {
  asJson,
  compare,
  firstDifference,
  isPlannerEvent,
  recorded,
  sameCall,
  type ReplayDivergence,
} from './replay-compare';
import { codeAgentMissing, codeAgentRunOf } from './replay-code';
import { describeCodeDivergence, liftedByRetry } from './replay-code-divergence';
import { replayModelFor } from './replay-model';

export interface ReplayInput {
  /** The run's whole log, in order (from the stream or the read API). */
  events: readonly RunEvent[];
  /**
   * The model to ask again at every decision; default: `replayModelFor(events)`. A code agent's run needs
   * one that serves its pinned version with code (`replayModelFor(events, { codeAgents })`).
   */
  model?: PlannerModel;
  /** The projector's state of the run (`GET /runs/:id`): checked to equal the fold of `events`. */
  projected?: unknown;
}

export type ReplayResult =
  | { ok: true; checked: number; decisions: number }
  | ({ ok: false; checked: number; decisions: number } & ReplayDivergence);

/**
 * Replays a run without running anything: no tool, no network, no NATS. (a) Folds the log and, given the
 * projector's state, checks it equals the fold. (b) Re-drives the run: from each folded prefix it asks the
 * planner's own step (`plannerStep`, which the run driver appends from) what the planner would append next,
 * and compares that with the events the log holds next. Recorded observations, signals and other inputs
 * stand in for the world: they are folded in, not re-derived. Compared: each planner event's type and data,
 * except `usage` (token counts are the provider's, not the planner's). Not compared: `meta` (ids and
 * causation embed stream sequences, which depend on every other run's appends; `ts` and `trace` are wall
 * clock and process). Events a fork copied from its source (ids `<runId>@fork.<i>`) are inputs: the
 * source's own replay checks them. Returns the first divergence, or how much was checked.
 *
 * A code agent's run is re-derived by re-running its code (`model.code`) against each prefix: a model that
 * does not serve the run's pinned code agent cannot check it, and replay throws `code_agent_not_given`
 * instead of reporting a check it did not make. Its divergence names the step and the call that differs.
 */
export async function replayRun(input: ReplayInput): Promise<ReplayResult> {
  const { events } = input;
  const model = input.model ?? replayModelFor(events);
  const code = codeAgentRunOf(events);
  if (code && (model.code === undefined || model.serves?.(code) !== true))
    throw codeAgentMissing(events[0]?.meta.runId ?? '', code, undefined);
  let decisions = 0;
  const diverged = (checked: number, divergence: ReplayDivergence): ReplayResult => ({
    ok: false,
    checked,
    decisions,
    ...divergence,
  });

  let folded: RunState;
  try {
    folded = fold(events);
  } catch (err) {
    if (!(err instanceof InvalidTransition)) throw err;
    const at = events.findIndex((event) => event.seq === err.seq);
    const event = events[at];
    return diverged(Math.max(0, at), {
      seq: err.seq,
      expected: null,
      actual: event ? recorded(event) : null,
      reason: `the log does not fold: ${err.message}`,
    });
  }
  if (input.projected !== undefined) {
    const difference = firstDifference(asJson(folded), asJson(input.projected), '$');
    if (difference) {
      return diverged(0, {
        seq: folded.lastSeq,
        expected: difference.expected ?? null,
        actual: difference.actual ?? null,
        reason: `the projector's state differs from the fold of the log at ${difference.path}; rebuild the projection`,
        projection: true,
      });
    }
  }

  let state = initialRunState();
  // The rest of one append: the driver appends a step's events together, so they follow in the log.
  let pending: EventDraft[] = [];
  for (const [index, event] of events.entries()) {
    const forkCopy = state.runId !== null && event.meta.id.startsWith(`${state.runId}@fork.`);
    if (state.status !== 'none' && !forkCopy) {
      const action = nextAction(state);
      if (pending.length === 0) {
        try {
          const step = await plannerStep(state, action, {
            model,
            now: new Date(event.meta.ts),
            admit: () => Promise.resolve(recordedAdmission(event)),
            hold: () => Promise.resolve(recordedKeyHold(event)),
          });
          pending = step.kind === 'none' ? [] : [...step.drafts];
        } catch (err) {
          return diverged(index, {
            seq: event.seq,
            expected: null,
            actual: recorded(event),
            reason: `the planner failed when asked again after seq ${state.lastSeq}: ${(err as Error).message}`,
          });
        }
        const next = pending[0];
        if (!isPlannerEvent(event) && !(next !== undefined && sameCall(next, event))) pending = [];
      }
      if (pending.length > 0 || isPlannerEvent(event)) {
        const draft = pending.shift();
        const problem = compare(draft, event, action);
        if (problem && liftedByRetry(events, index)) {
          // An operator's `retry` resolved this stop: the code decides again from here, as the planner did.
          pending = [];
          state = evolve(state, event);
          continue;
        }
        if (problem) {
          const inCode = describeCodeDivergence(state, draft, event);
          return diverged(index, { seq: event.seq, ...problem, ...inCode });
        }
        decisions += 1;
      }
    }
    state = evolve(state, event);
  }
  return { ok: true, checked: events.length, decisions };
}

/** Flow control as the log recorded it: a wait for capacity where the log holds one, else the call went. */
function recordedAdmission(event: RunEvent): CallAdmission {
  if (event.type !== 'wait_requested' || !event.data.waitId.startsWith(CAPACITY_WAIT_PREFIX))
    return { kind: 'go' };
  return {
    kind: 'wait',
    until: new Date(event.data.until ?? event.meta.ts),
    reason: event.data.reason ?? '',
  };
}

/** A concurrency key as the log recorded it: a wait for the key where the log holds one, else the run held it. */
function recordedKeyHold(event: RunEvent): CallAdmission {
  const admission = recordedAdmission(event);
  return admission.kind === 'wait' && isKeyWait(admission.reason) ? admission : { kind: 'go' };
}
