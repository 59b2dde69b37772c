import type { EventType, JsonValue, RunEvent } from '@dura/contracts';
import { canonicalJson, type EventDraft, type PlannerAction } from '@dura/core';

/** The first recorded event that is not what the planner, given the same log, would append there. */
export interface ReplayDivergence {
  seq: number;
  /** What the planner appends now (`{type, data}`), or null when it would append nothing there. */
  expected: unknown;
  /** What the log holds there (`{type, data}`), or the projector's value for a projection mismatch. */
  actual: unknown;
  reason: string;
  /** A code agent's run: the step (1-based, as the engine counts them) the divergence is in. */
  step?: number;
  /** The projector's state differs from the fold: `expected` is the fold's value, `actual` the projector's. */
  projection?: true;
}

/** Events only the planner appends; every other type arrives from outside (intake, gateway, signals). */
const PLANNER_TYPES = new Set<EventType>([
  'run_started',
  'budget_reserved',
  'budget_exceeded',
  'context_summarized',
  'thought',
  'tool_call_requested',
  'wait_requested',
  'child_run_requested',
  'run_completed',
  'run_failed',
  'run_cancelled',
]);

export function isPlannerEvent(event: RunEvent): boolean {
  return PLANNER_TYPES.has(event.type);
}

/** An observation the planner itself records (an operator's verdict), matched by call. */
export function sameCall(draft: EventDraft, event: RunEvent): boolean {
  if (draft.type !== event.type) return false;
  if (draft.type !== 'tool_call_completed' && draft.type !== 'tool_call_failed') return false;
  return 'callId' in event.data && draft.data.callId === event.data.callId;
}

/** Why `event` is not `draft` (type and data, usage aside), or undefined when it is. */
export function compare(
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
  const expected = { type: draft.type, data: comparable(draft.type, asRecordedThen(draft, event)) };
  const actual = { type: event.type, data: comparable(event.type, event.data) };
  if (expected.type !== actual.type)
    return {
      expected,
      actual,
      reason: `the planner would append ${draft.type} here, but the log has ${event.type}`,
    };
  // A thought's decision first: the call that changed says more than the text that came with it.
  const difference =
    (draft.type === 'thought'
      ? firstDifference(decisionOf(expected.data), decisionOf(actual.data), 'data.decision')
      : undefined) ?? firstDifference(expected.data, actual.data, 'data');
  if (!difference) return undefined;
  return {
    expected,
    actual,
    reason: `the recorded ${event.type} differs from what the planner decides now at ${difference.path}`,
  };
}

/**
 * A wait recorded before waits carried `delayMs` (wait_requested v2) was due at its recorded time: the draft's
 * `delayMs` is not asked of it, the rest of the wait still is.
 */
function asRecordedThen(draft: EventDraft, event: RunEvent): object {
  if (draft.type !== 'wait_requested' || event.type !== 'wait_requested' || event.data.delayMs !== undefined)
    return draft.data;
  const { delayMs: _relative, ...rest } = draft.data;
  return rest;
}

function decisionOf(data: JsonValue): JsonValue | undefined {
  return data !== null && typeof data === 'object' && !Array.isArray(data) ? data['decision'] : undefined;
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

export function recorded(event: RunEvent): { type: string; data: JsonValue } {
  return { type: event.type, data: comparable(event.type, event.data) };
}

/** The data as compared: plain JSON, without the figures replay ignores (token counts are the provider's). */
function comparable(type: string, data: object): JsonValue {
  const json = asJson(data) as Record<string, JsonValue>;
  if (type === 'thought' || type === 'context_summarized') delete json['usage'];
  return json;
}

export function asJson(value: unknown): JsonValue {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as JsonValue);
}

/** The first path (`$.calls[2].status`) where two JSON values differ, with the values found there. */
export function firstDifference(
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
