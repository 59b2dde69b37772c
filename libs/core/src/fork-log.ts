import {
  newEvent,
  type ForkEdit,
  type ForkEdited,
  type NewEvent,
  type RunEvent,
  type RunEventOf,
} from '@dura/contracts';
import { fold } from './evolve';
import { applyForkEdit } from './fork-edit';
import type { CallState } from './run-state';

/** The id of the i-th event (0-based) of a fork's copied prefix: a redelivered fork request is a no-op. */
export function forkEventId(runId: string, index: number): string {
  return `${runId}@fork.${index}`;
}

export interface ForkInput {
  /** The source run's whole log, in order. */
  source: readonly RunEvent[];
  /** Stream sequence of the source's last event to copy. */
  atSeq: number;
  /** The new run's id. */
  runId: string;
  /** Time and trace context of the fork: every copy is written now, in the fork's trace. */
  ts: string;
  trace?: string;
  /** An edited input and/or tool result, and who edited (see `applyForkEdit`). */
  edit?: ForkEdit;
}

export interface ForkProblem {
  code:
    | 'source_not_found'
    | 'source_not_forkable'
    | 'fork_point_not_found'
    | 'fork_point_terminal'
    | 'fork_source_unsettled'
    | 'fork_edit_invalid';
  message: string;
  /** The source may still settle: asking again later can succeed. */
  retryable: boolean;
}

export type ForkPlan = { ok: true; events: NewEvent[] } | { ok: false; problem: ForkProblem };

const ENDINGS = new Set<RunEvent['type']>(['run_completed', 'run_failed', 'run_cancelled', 'run_rejected']);

/**
 * The log a fork starts with: `run_requested` (the source's request under the new run id, with `forkOf`),
 * then copies of the source's events after its `run_requested` up to and including `atSeq`, re-stamped for
 * the new run (run id, ids `<runId>@fork.<i>`, causation mapped to the copies). Copied intents keep their
 * idempotency keys: they name effects that already happened in the source. A call whose intent is copied
 * but whose observation comes after `atSeq` is therefore never run again: its recorded outcome (the one
 * the effect ledger holds for that key) is copied too, right after the prefix. With `edit`, the copy carries
 * the edited input or tool result and `forkOf.edited` records it (see `applyForkEdit`). Pure.
 */
export function planFork(input: ForkInput): ForkPlan {
  const { source, atSeq } = input;
  const sourceRunId = source[0]?.meta.runId;
  const problem = (code: ForkProblem['code'], message: string, retryable = false): ForkPlan => ({
    ok: false,
    problem: { code, message, retryable },
  });
  const first = source[0];
  if (first === undefined || sourceRunId === undefined)
    return problem('source_not_found', 'the source run does not exist; check its id with `dura ls`');
  if (first.type !== 'run_requested' || source.some((e) => e.type === 'run_rejected'))
    return problem(
      'source_not_forkable',
      `run ${sourceRunId} was rejected at intake, so it has no run to fork; submit a corrected request instead`,
    );
  const end = source.findIndex((event) => event.seq === atSeq);
  if (end < 0) {
    const seqs = `${first.seq}..${source.at(-1)?.seq ?? first.seq}`;
    return problem(
      'fork_point_not_found',
      `run ${sourceRunId} has no event at seq ${atSeq} (its events lie between seqs ${seqs}, with gaps for other runs); pick one from \`dura events ${sourceRunId}\``,
    );
  }
  const prefix = source.slice(0, end + 1);
  const ending = prefix.find((event) => ENDINGS.has(event.type));
  if (ending)
    return problem(
      'fork_point_terminal',
      `run ${sourceRunId} ended at seq ${ending.seq} (${ending.type}), at or before seq ${atSeq}, so a fork there would start finished; fork at an earlier event`,
    );
  const settled = settleOpenCalls(source, end, fold(prefix).calls);
  if (!Array.isArray(settled))
    return problem(
      'fork_source_unsettled',
      `call ${settled.callId} (step ${settled.step}, ${settled.tool}) of run ${sourceRunId} was requested before seq ${atSeq} and has no outcome yet; the fork copies its outcome instead of running it again, so it waits for the source to record one (or fork at a seq before that call's intent)`,
      true,
    );
  const copied = [...prefix, ...settled];
  if (input.edit === undefined) return { ok: true, events: restamp(copied, input) };
  const edited = applyForkEdit(copied, input.edit, { sourceRunId, atSeq });
  if (!edited.ok) return problem('fork_edit_invalid', `the edit cannot be made: ${edited.message}`);
  return { ok: true, events: restamp(edited.events, input, edited.edited) };
}

/**
 * For every call still open at the fork point, the source's observations of it after the fork point, up to
 * its final one; or the first open call that has no final observation yet.
 */
function settleOpenCalls(
  source: readonly RunEvent[],
  end: number,
  calls: readonly CallState[],
): RunEvent[] | CallState {
  const open = calls.filter((call) => call.status === 'pending');
  const out: RunEvent[] = [];
  for (const call of open) {
    const later = source
      .slice(end + 1)
      .filter(
        (event): event is RunEventOf<'tool_call_completed'> | RunEventOf<'tool_call_failed'> =>
          (event.type === 'tool_call_completed' || event.type === 'tool_call_failed') &&
          event.data.callId === call.callId &&
          event.data.idempotencyKey === call.idempotencyKey,
      );
    const final = later.findIndex((event) => event.type === 'tool_call_completed' || !event.data.retryable);
    if (final < 0) return call;
    out.push(...later.slice(0, final + 1));
  }
  return out.sort((a, b) => a.seq - b.seq);
}

function restamp(events: readonly RunEvent[], input: ForkInput, edited?: ForkEdited): NewEvent[] {
  const { runId } = input;
  const ids = new Map<string, string>();
  const sourceRunId = events[0]?.meta.runId ?? '';
  // Snapshot markers name positions in the source's log, which mean nothing in the fork's.
  const copied = events.filter((event) => event.type !== 'snapshot_taken');
  return copied.map((event, index) => {
    const id = forkEventId(runId, index);
    ids.set(event.meta.id, id);
    const causationId = event.meta.causationId === undefined ? undefined : ids.get(event.meta.causationId);
    const meta = {
      id,
      runId,
      ts: input.ts,
      correlationId: runId,
      ...(causationId === undefined ? {} : { causationId }),
      ...(input.trace === undefined ? {} : { trace: input.trace }),
    };
    if (event.type === 'run_requested') {
      const data = {
        request: { ...event.data.request, runId },
        forkOf: { runId: sourceRunId, atSeq: input.atSeq, ...(edited ? { edited } : {}) },
      };
      return newEvent('run_requested', data, meta);
    }
    return newEvent(event.type, event.data as never, meta);
  });
}
