import {
  isControlTool,
  isSecretEnvelope,
  type ForkEdit,
  type ForkEdited,
  type JsonValue,
  type RunEvent,
  type RunEventOf,
} from '@dura/contracts';
import { jsonHash } from './idempotency';

/** Events that record a decision: each was made from the log before it (input, results) as recorded. */
const DECISIONS = new Set<RunEvent['type']>([
  'thought',
  'context_summarized',
  'tool_call_requested',
  'child_run_requested',
]);

export type EditedCopy =
  { ok: true; events: RunEvent[]; edited: ForkEdited } | { ok: false; message: string };

/** One edit applied to the copy, with the record of what it replaced; or why it cannot be made. */
type EditOf<K extends 'input' | 'toolResult'> =
  { ok: true; events: RunEvent[]; record: NonNullable<ForkEdited[K]> } | { ok: false; message: string };

interface Origin {
  sourceRunId: string;
  atSeq: number;
}

/**
 * The events a fork copies (`copied`: the source's, in order, `run_requested` first) with `edit` applied, and
 * the record of what it replaced; or why the edit cannot be made. An edit never makes the log claim a
 * decision was taken from a value it never saw: the input is editable only before the run's first decision,
 * a tool result only when no decision follows it in the copy. The edited call keeps its intent and
 * idempotency key (its effect happened once, in the source; the fork never runs it again). Pure.
 */
export function applyForkEdit(copied: readonly RunEvent[], edit: ForkEdit, origin: Origin): EditedCopy {
  const sealed = [edit.input, edit.toolResult?.output].some(
    (value) => value !== undefined && holdsSealed(value),
  );
  if (sealed)
    return refused(
      'the edit holds a sealed secret ({"$secret": …}) copied from the source; a sealed value opens only in the run that sealed it: write the secret in clear (the fork seals it for itself) or leave the field out',
    );
  let events = [...copied];
  const edited: ForkEdited = { by: edit.by };
  if (edit.input !== undefined) {
    const input = editInput(events, edit.input, origin);
    if (!input.ok) return input;
    events = input.events;
    edited.input = input.record;
  }
  if (edit.toolResult !== undefined) {
    const result = editResult(events, edit, origin);
    if (!result.ok) return result;
    events = result.events;
    edited.toolResult = result.record;
  }
  return { ok: true, events, edited };
}

function refused(message: string): { ok: false; message: string } {
  return { ok: false, message };
}

function editInput(events: RunEvent[], input: JsonValue, origin: Origin): EditOf<'input'> {
  const [root] = events;
  if (root?.type !== 'run_requested') return refused('the source has no run_requested to edit');
  const decision = events.find((event) => DECISIONS.has(event.type));
  if (decision)
    return refused(
      `the input can be edited only before the run's first decision: run ${origin.sourceRunId} decided at seq ${decision.seq} (${decision.type}) from its recorded input, at or before seq ${origin.atSeq}; fork at seq ${root.seq} (its run_requested) with the edited input`,
    );
  const original = root.data.request.input;
  const copy: RunEventOf<'run_requested'> = {
    ...root,
    data: { ...root.data, request: { ...root.data.request, input } },
  };
  return {
    ok: true,
    events: [copy, ...events.slice(1)],
    record: original === undefined ? {} : { originalSha256: jsonHash(original) },
  };
}

function editResult(events: RunEvent[], edit: ForkEdit, origin: Origin): EditOf<'toolResult'> {
  const { callId, output } = edit.toolResult!;
  const { sourceRunId, atSeq } = origin;
  const intent = events.find(
    (event): event is RunEventOf<'tool_call_requested'> =>
      event.type === 'tool_call_requested' && event.data.callId === callId,
  );
  if (!intent) {
    const calls = events.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data.callId] : []));
    const known = calls.length === 0 ? 'none' : calls.slice(0, 20).join(', ');
    return refused(
      `run ${sourceRunId} has no call "${callId}" at or before seq ${atSeq} (its calls there: ${known}); pick the call whose result to edit from \`dura events ${sourceRunId}\``,
    );
  }
  const { idempotencyKey, tool } = intent.data;
  if (isControlTool(tool))
    return refused(
      `call ${callId} is ${tool}, a control tool: its result is the runtime's own record (a timer, a signal, a child run), not a tool's answer to edit`,
    );
  const observations = events.filter(
    (event): event is RunEventOf<'tool_call_completed'> | RunEventOf<'tool_call_failed'> =>
      (event.type === 'tool_call_completed' || event.type === 'tool_call_failed') &&
      event.data.callId === callId &&
      event.data.idempotencyKey === idempotencyKey,
  );
  const completed = observations.filter(
    (event): event is RunEventOf<'tool_call_completed'> => event.type === 'tool_call_completed',
  );
  const last = completed.at(-1);
  if (!last) {
    const failed = observations.at(-1);
    return refused(
      failed?.type === 'tool_call_failed'
        ? `call ${callId} (${tool}) failed (${failed.data.error.code}: ${failed.data.error.message}); only a completed call's result can be edited`
        : `call ${callId} (${tool}) has no recorded result in the fork's copy of run ${sourceRunId}; only a completed call's result can be edited`,
    );
  }
  const at = events.indexOf(last);
  const decision = events.slice(at + 1).find((event) => DECISIONS.has(event.type));
  if (decision)
    return refused(
      `run ${sourceRunId} decided at seq ${decision.seq} (${decision.type}) from the recorded result of call ${callId} (seq ${last.seq}); fork at seq ${last.seq} (or before seq ${decision.seq}) to edit that result`,
    );
  const originalSha256 = last.data.resultRef?.sha256 ?? jsonHash(last.data.result);
  const record = { callId, sourceSeq: last.seq, originalSha256 };
  const marked = { by: edit.by, sourceRunId, sourceSeq: last.seq, originalSha256 };
  const replaced = events.map((event): RunEvent => {
    if (!completed.includes(event as RunEventOf<'tool_call_completed'>)) return event;
    const { resultRef: _dropped, ...data } = (event as RunEventOf<'tool_call_completed'>).data;
    return { ...event, data: { ...data, result: output, edited: marked } } as RunEvent;
  });
  return { ok: true, events: replaced, record };
}

/** Whether a sealed secret envelope lies anywhere in `value`. */
function holdsSealed(value: JsonValue): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (isSecretEnvelope(value)) return true;
  const items: JsonValue[] = Array.isArray(value) ? value : Object.values(value);
  return items.some(holdsSealed);
}
