import type { Decision, JsonValue, RunEvent } from '@dura/contracts';
import { canonicalJson, RETRY_SIGNAL, type EventDraft, type RunState } from '@dura/core';
import { decodeJournal, type JournalEntry } from '@dura/code-agents/engine';

const SHOWN = 200;

function shown(value: JsonValue | undefined): string {
  const text = value === undefined ? 'nothing' : canonicalJson(value);
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
}

function callText(call: { tool: string; args: JsonValue }): string {
  return `${call.tool} ${shown(call.args)}`;
}

function endText(decision: Decision): string {
  if (decision.kind === 'complete')
    return decision.output === undefined ? 'to finish' : `to finish with ${shown(decision.output)}`;
  if (decision.kind === 'fail') return `to fail (${decision.error.code}: ${decision.error.message})`;
  return decision.kind;
}

/** A decision's calls (`pay.charge {"amount":1}, …`) or its ending (`to finish with …`). */
function asksOf(decision: Decision): string {
  return decision.kind === 'tool_calls' ? decision.calls.map(callText).join(', ') : endText(decision);
}

/** A journal entry as a divergence names it: `ctx.now() = 1700000000000`, `ctx.model (request 1a2b…)`. */
export function entryText(entry: JournalEntry | undefined): string {
  if (entry === undefined) return 'nothing more';
  if (entry.k === 'model') return `ctx.model (request ${entry.h.slice(0, 12)})`;
  return `ctx.${entry.k}() = ${shown(entry.v)}`;
}

/** The first call (or end) where two decisions differ: [recorded, now], or undefined when they agree. */
function firstCallDifference(recorded: Decision, now: Decision): [string, string] | undefined {
  const callsOf = (d: Decision) => (d.kind === 'tool_calls' ? d.calls : []);
  const was = callsOf(recorded);
  const is = callsOf(now);
  for (let i = 0; i < Math.max(was.length, is.length); i += 1) {
    const a = was[i];
    const b = is[i];
    if (a && b && a.tool === b.tool && canonicalJson(a.args) === canonicalJson(b.args)) continue;
    const inStep = recorded.kind === 'tool_calls' && now.kind === 'tool_calls';
    const none = inStep ? 'no further call in this step' : undefined;
    return [
      a ? callText(a) : (none ?? endText(recorded)),
      b ? `asks ${callText(b)}` : none ? `asks ${none}` : `asks ${endText(now)}`,
    ];
  }
  if (recorded.kind !== 'tool_calls' && canonicalJson(recorded) !== canonicalJson(now))
    return [endText(recorded), `asks ${endText(now)}`];
  return undefined;
}

/**
 * A code agent's divergence in its own terms: the step (1-based, as the engine counts them), what the log
 * recorded there and what the code asks for now, e.g. `step 2: recorded pay.charge {"amount":2}, the code
 * now asks pay.checked {"amount":2}`. Undefined when the difference is not one of the code's calls or values
 * (the generic reason, naming the path that differs, stands then).
 */
export function describeCodeDivergence(
  state: RunState,
  expected: EventDraft | undefined,
  event: RunEvent,
): { step: number; reason: string } | undefined {
  if (state.pinned?.provider !== 'code') return undefined;
  const number = state.turns.length + 1;
  const at = (reason: string) => ({ step: number, reason: `step ${number}: ${reason}` });
  if (expected?.type === 'wait_requested' && expected.data.waitId.startsWith('operator:code:'))
    return at(expected.data.reason ?? 'the code cannot be driven by the log');
  if (
    expected?.type === 'thought' &&
    event.type === 'wait_requested' &&
    event.data.waitId.startsWith('operator:code:')
  ) {
    return at(
      `the log stopped the code here (${event.data.reason ?? 'non-determinism'}); the code now asks ${asksOf(expected.data.decision)}`,
    );
  }
  // A metered step reserves before its first ctx.model call: a reservation the code no longer makes is that
  // call. (A call the step did not record is non-determinism before any reservation: see replayCodeAgents.)
  if (expected?.type === 'thought' && event.type === 'budget_reserved')
    return at(
      `the log reserved the budget for a ctx.model call here, the code now asks ${asksOf(expected.data.decision)} without one`,
    );
  if (expected?.type !== 'thought' || event.type !== 'thought') return undefined;
  const now = expected.data;
  const call = firstCallDifference(event.data.decision, now.decision);
  if (call) return at(`recorded ${call[0]}, the code now ${call[1]}`);
  const was = decodeJournal(event.data.content);
  const is = decodeJournal(now.content);
  for (let i = 0; i < Math.max(was.length, is.length); i += 1) {
    if (JSON.stringify(was[i] ?? null) === JSON.stringify(is[i] ?? null)) continue;
    const asked =
      is[i] === undefined ? 'asks nothing more' : `asks ${entryText(is[i]).replace(/ = .*$/, '')}`;
    return at(`recorded ${entryText(was[i])} (value ${i + 1} of the step), the code now ${asked}`);
  }
  return undefined;
}

/** The wait a code agent's run stops in when its code does not agree with the log. */
export function isCodeStop(event: RunEvent): boolean {
  return event.type === 'wait_requested' && event.data.waitId.startsWith('operator:code:');
}

/**
 * Whether the code stop at `index` was resolved by an operator: a later `retry` lifted it, so the planner
 * decided again with the code it served then. The stop itself is an input, like a signal: the code served
 * before it diverged, which no replay of the code that finished the run can re-derive.
 */
export function liftedByRetry(events: readonly RunEvent[], index: number): boolean {
  if (!isCodeStop(events[index] as RunEvent)) return false;
  for (const later of events.slice(index + 1)) {
    if (later.type === 'signal_received' && later.data.name === RETRY_SIGNAL) return true;
    if (later.type === 'run_completed' || later.type === 'run_failed' || later.type === 'run_cancelled')
      return false;
  }
  return false;
}
