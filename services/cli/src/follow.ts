import { nextStep, RunNotFound, TERMINAL_EVENTS } from '@dura/client';
import type { RunEvent } from '@dura/contracts';
import { isTerminal } from '@dura/core';
import { EXIT, type CommandContext } from './command';

/** The exit code of a run that ended: 0 completed, 1 failed, cancelled or rejected. */
export function exitForStatus(status: string): number {
  return status === 'completed' ? EXIT.ok : EXIT.runFailed;
}

const STATUS_OF_EVENT: Record<string, string> = {
  run_completed: 'completed',
  run_failed: 'failed',
  run_cancelled: 'cancelled',
  run_rejected: 'rejected',
};

/** The issues a rejection lists (unknown tools, invalid arguments), one per line. */
export function rejectionIssues(event: RunEvent): string[] {
  return event.type === 'run_rejected' ? (event.data.issues ?? []).map((issue) => `  ${issue}`) : [];
}

/** One line saying how a run ended, from its terminal event. */
export function outcomeLine(event: RunEvent): string {
  switch (event.type) {
    case 'run_completed':
      return `run ${event.meta.runId} completed`;
    case 'run_failed':
    case 'run_rejected':
      return `run ${event.meta.runId} ${STATUS_OF_EVENT[event.type]}: ${event.data.error.code}: ${event.data.error.message}`;
    case 'run_cancelled':
      return `run ${event.meta.runId} cancelled: ${event.data.reason}`;
    default:
      return `run ${event.meta.runId} at seq ${event.seq}`;
  }
}

/**
 * Prints the run's events from `fromSeq` as they arrive and resolves with the exit code of its outcome;
 * Ctrl-C (ctx.signal) stops following and resolves with 130.
 */
export interface FollowOptions {
  /** Events up to this seq are history: a wait among them was resolved unless it is the last (default 0). */
  historyUntil?: number;
  /** Called before each event is printed (ends a line of streamed tokens). */
  beforeEvent?: () => void;
}

export async function followRun(
  ctx: CommandContext,
  runId: string,
  fromSeq: number,
  options: FollowOptions = {},
): Promise<number> {
  const historyUntil = options.historyUntil ?? 0;
  let hint: string | undefined;
  for await (const event of ctx.client.watchRun(runId, { fromSeq, signal: ctx.signal })) {
    options.beforeEvent?.();
    ctx.out.event(event);
    if (TERMINAL_EVENTS.has(event.type)) {
      if (!ctx.json) {
        ctx.out.line(outcomeLine(event));
        for (const issue of rejectionIssues(event)) ctx.out.line(issue);
      }
      return exitForStatus(STATUS_OF_EVENT[event.type] ?? 'failed');
    }
    // A wait still open says what resolves it, as a command to copy (stderr: stdout stays the event stream).
    // A budget wait keeps the hint of the budget_exceeded just before it, which names the limit.
    const next = nextStep(event);
    const keeps = event.type === 'wait_requested' && event.data.kind === 'budget';
    hint = next ?? (keeps ? hint : undefined);
    if (hint !== undefined && event.seq >= historyUntil) {
      ctx.out.note(`  next: ${hint}`);
      hint = undefined;
    }
  }
  return 130;
}

/**
 * Throws `RunNotFound` (exit 3) for a run with no events, rather than waiting for one that does not exist;
 * returns how the run ended when it ended before `fromSeq` (nothing would ever arrive), else undefined.
 */
export async function endedBefore(
  ctx: CommandContext,
  runId: string,
  fromSeq: number,
): Promise<{ status: string; seq: number } | undefined> {
  const last = await ctx.client.lastSeq(runId);
  if (last === 0) throw new RunNotFound(runId);
  if (last >= fromSeq) return undefined;
  const state = await ctx.client.getRun(runId);
  return isTerminal(state.status) ? { status: state.status, seq: state.lastSeq } : undefined;
}
