import { DuraError, type EventType, type JsonValue, type RunEvent } from '@dura/contracts';
import {
  canonicalJson,
  evolve,
  fold,
  initialRunState,
  InvalidTransition,
  nextAction,
  type EventDraft,
  type PlannerAction,
  type RunState,
} from '@dura/core';
import type { Model } from './model';
import { createScriptedModel } from './scripted-model';

export interface ReplayInput {
  /** The run's whole log, in order (from the stream or the read API). */
  events: readonly RunEvent[];
  /** The model to ask again at every decision; default: `replayModelFor(events)`. */
  model?: Model;
  /** The projector's state of the run (`GET /runs/:id`): checked to equal the fold of `events`. */
  projected?: unknown;
}

/** The first recorded event that is not what the planner, given the same log, would append there. */
export interface ReplayDivergence {
  seq: number;
  /** What the planner appends now (`{type, data}`), or null when it would append nothing there. */
  expected: unknown;
  /** What the log holds there (`{type, data}`), or the projector's value for a projection mismatch. */
  actual: unknown;
  reason: string;
}

export type ReplayResult =
  | { ok: true; checked: number; decisions: number }
  | ({ ok: false; checked: number; decisions: number } & ReplayDivergence);

/** Events only the planner appends; every other type arrives from outside (intake, gateway, signals). */
const PLANNER_TYPES = new Set<EventType>([
  'run_started',
  'thought',
  'tool_call_requested',
  'wait_requested',
  'child_run_requested',
  'run_completed',
  'run_failed',
  'run_cancelled',
]);

/**
 * Replays a run without running anything: no tool, no network, no NATS. (a) Folds the log and, given the
 * projector's state, checks it equals the fold. (b) Re-drives the run: from each folded prefix it asks the
 * real decider (`nextAction`), and the model when the decider says `decide`, what the planner would
 * append next, and compares that with the event the log holds next. Recorded observations, signals and
 * other inputs stand in for the world: they are folded in, not re-derived. Compared: each planner event's
 * type and data, except `thought.usage` (token counts are the provider's, not the planner's). Not compared:
 * `meta` (ids and causation embed stream sequences, which depend on every other run's appends; `ts` and
 * `trace` are wall clock and process). Events a fork copied from its source (ids `<runId>@fork.<i>`) are
 * inputs: the source's own replay checks them. Returns the first divergence, or how much was checked.
 */
export async function replayRun(input: ReplayInput): Promise<ReplayResult> {
  const { events } = input;
  const model = input.model ?? replayModelFor(events);
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
      });
    }
  }

  let state = initialRunState();
  for (const [index, event] of events.entries()) {
    const forkCopy = state.runId !== null && event.meta.id.startsWith(`${state.runId}@fork.`);
    if (state.status !== 'none' && !forkCopy) {
      const action = nextAction(state);
      let drafts: EventDraft[];
      try {
        drafts = await plannerAppend(state, action, model);
      } catch (err) {
        return diverged(index, {
          seq: event.seq,
          expected: null,
          actual: recorded(event),
          reason: `the model failed when asked again after seq ${state.lastSeq}: ${(err as Error).message}`,
        });
      }
      const next = drafts[0];
      const ours = PLANNER_TYPES.has(event.type) || (next !== undefined && sameCall(next, event));
      if (ours) {
        const problem = compare(next, event, action);
        if (problem) return diverged(index, { seq: event.seq, ...problem });
        decisions += 1;
      }
    }
    state = evolve(state, event);
  }
  return { ok: true, checked: events.length, decisions };
}

/**
 * The model replay re-asks by default: scripted agents are deterministic code, so they are asked again;
 * any other agent (an LLM, whose answer would differ run to run) is answered from its recorded thoughts,
 * which still checks everything the planner derives from them (intents, keys, completions).
 */
export function replayModelFor(events: readonly RunEvent[]): Model {
  const first = events[0];
  const kind = first?.type === 'run_requested' ? first.data.request.agent.kind : undefined;
  return kind === 'scripted' ? createScriptedModel() : recordedModel(events);
}

/** A model that answers each decision with the thought the log recorded right after that point. */
export function recordedModel(events: readonly RunEvent[]): Model {
  return {
    decide: ({ state }) => {
      const thought = events.find((event) => event.type === 'thought' && event.seq > state.lastSeq);
      if (thought?.type !== 'thought')
        return Promise.reject(
          new DuraError('no_recorded_thought', `the log records no thought after seq ${state.lastSeq}`),
        );
      const { decision, content, usage, model, finishReason } = thought.data;
      return Promise.resolve({
        decision,
        usage,
        model,
        finishReason,
        ...(content === undefined ? {} : { content }),
      });
    },
  };
}

/** What the planner appends in this state: the decider's drafts, or the thought the model gives. */
async function plannerAppend(state: RunState, action: PlannerAction, model: Model): Promise<EventDraft[]> {
  switch (action.kind) {
    case 'start':
      return [{ type: 'run_started', data: {} }];
    case 'record':
      return action.events;
    case 'decide': {
      const request = state.request;
      if (!request) return [];
      const turn = await model.decide({ state, request });
      const data = {
        step: state.steps,
        model: turn.model,
        ...(turn.content === undefined ? {} : { content: turn.content }),
        decision: turn.decision,
        usage: turn.usage,
        finishReason: turn.finishReason,
      };
      return [{ type: 'thought', data }];
    }
    case 'dispatch':
    case 'idle':
      return [];
  }
}

/** An observation the planner itself records (an operator's verdict), matched by call. */
function sameCall(draft: EventDraft, event: RunEvent): boolean {
  if (draft.type !== event.type) return false;
  if (draft.type !== 'tool_call_completed' && draft.type !== 'tool_call_failed') return false;
  return 'callId' in event.data && draft.data.callId === event.data.callId;
}

function compare(
  draft: EventDraft | undefined,
  event: RunEvent,
  action: PlannerAction,
): Omit<ReplayDivergence, 'seq'> | undefined {
  if (draft === undefined)
    return {
      expected: null,
      actual: recorded(event),
      reason: `the planner would append nothing here (${describe(action)}), but the log has ${event.type}`,
    };
  const expected = { type: draft.type, data: comparable(draft.type, draft.data) };
  const actual = { type: event.type, data: comparable(event.type, event.data) };
  if (expected.type !== actual.type)
    return {
      expected,
      actual,
      reason: `the planner would append ${draft.type} here, but the log has ${event.type}`,
    };
  const difference = firstDifference(expected.data, actual.data, 'data');
  if (!difference) return undefined;
  return {
    expected,
    actual,
    reason: `the recorded ${event.type} differs from what the planner decides now at ${difference.path}`,
  };
}

function describe(action: PlannerAction): string {
  switch (action.kind) {
    case 'dispatch':
      return `it dispatches ${action.calls.map((call) => call.callId).join(', ')} and waits for observations`;
    case 'idle':
      return action.reason === 'finished' ? 'the run has ended' : `it is idle: ${action.reason}`;
    default:
      return action.kind;
  }
}

function recorded(event: RunEvent): { type: string; data: JsonValue } {
  return { type: event.type, data: comparable(event.type, event.data) };
}

/** The data as compared: plain JSON, without the figures replay ignores. */
function comparable(type: string, data: object): JsonValue {
  const json = asJson(data) as Record<string, JsonValue>;
  if (type === 'thought') delete json['usage'];
  return json;
}

function asJson(value: unknown): JsonValue {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as JsonValue);
}

/** The first path (`$.calls[2].status`) where two JSON values differ, with the values found there. */
function firstDifference(
  expected: JsonValue | undefined,
  actual: JsonValue | undefined,
  path: string,
): { path: string; expected: JsonValue | undefined; actual: JsonValue | undefined } | undefined {
  const bothObjects =
    expected !== null && actual !== null && typeof expected === 'object' && typeof actual === 'object';
  if (!bothObjects || Array.isArray(expected) !== Array.isArray(actual)) {
    const same =
      expected !== undefined && actual !== undefined && canonicalJson(expected) === canonicalJson(actual);
    return same || (expected === undefined && actual === undefined) ? undefined : { path, expected, actual };
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    for (let i = 0; i < Math.max(expected.length, actual.length); i += 1) {
      const found = firstDifference(expected[i], actual[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  const left = expected as Record<string, JsonValue>;
  const right = actual as Record<string, JsonValue>;
  for (const key of [...new Set([...Object.keys(left), ...Object.keys(right)])].sort()) {
    const found = firstDifference(left[key], right[key], `${path}.${key}`);
    if (found) return found;
  }
  return undefined;
}
