import { RunNotFound } from '@dura/client';
import { DuraError, type RunEvent } from '@dura/contracts';
import { planFork } from '@dura/core';
import { booleanFlag, intFlag, positional, stringFlag } from '../args';
import { EXIT, UsageError, type CommandContext, type CommandModule } from '../command';
import { followRun } from '../follow';

/**
 * Refuses at once what the planner would refuse (it checks again: this is only for a quick answer): a source
 * without events, a seq that is not one of its events, a fork point after the run ended, a run id in use.
 */
async function precheck(
  ctx: CommandContext,
  sourceRunId: string,
  atSeq: number,
  runId?: string,
): Promise<void> {
  const source: RunEvent[] = await ctx.client.readEvents(sourceRunId);
  if (source.length === 0) throw new RunNotFound(sourceRunId);
  const plan = planFork({ source, atSeq, runId: runId ?? 'precheck', ts: new Date().toISOString() });
  if (!plan.ok && !plan.problem.retryable) throw new DuraError(plan.problem.code, plan.problem.message);
  if (runId === undefined) return;
  const [first] = await ctx.client.readEvents(runId);
  const sameFork =
    first?.type === 'run_requested' &&
    first.data.forkOf?.runId === sourceRunId &&
    first.data.forkOf.atSeq === atSeq;
  if (first !== undefined && !sameFork)
    throw new DuraError(
      'run_id_conflict',
      `run id ${runId} is already used by another run; pick a new --run-id (or leave it out)`,
    );
}

export const fork: CommandModule = {
  name: 'fork',
  summary: "Start a new run from a run's log up to a seq, and let the planner drive it from there",
  usage: 'dura fork <run-id> --at SEQ [--run-id ID] [--follow]',
  flags: {
    at: { type: 'string', value: 'SEQ', description: 'the last event of the source to keep (required)' },
    'run-id': { type: 'string', value: 'ID', description: "the new run's id (default: a fresh fork_… id)" },
    follow: { type: 'boolean', description: "print the new run's events until it ends" },
  },
  positionals: { min: 1, max: 1 },
  help: `The new run's log starts with the source's request and copies of its events up to and including
the one at SEQ (dura events <run-id> lists them); the planner then decides what comes next as in any run.
Steps recorded before SEQ keep their results and are not run again; steps after it run again, under the new
run's idempotency keys. A call requested before SEQ whose result came after it is not run again either:
the fork copies its recorded result. The source run is not changed. --json prints { runId, sourceRunId,
atSeq, duplicate } (then the events as JSON lines with --follow).

Examples:
  dura fork run_42 --at 118
  dura fork run_42 --at 118 --run-id run_42-retry --follow

Exit code: 0 once requested (with --follow: the new run's outcome, 0 completed, 1 otherwise); 3 when the
source or the seq does not exist; 5 when the source had ended by SEQ or the new run id is taken.`,
  async run(args, ctx) {
    const sourceRunId = positional(args, 0, 'run id');
    const atSeq = intFlag(args, 'at', { min: 1 });
    if (atSeq === undefined) throw new UsageError('--at SEQ is required: the seq of the last event to keep');
    const wanted = stringFlag(args, 'run-id');
    await precheck(ctx, sourceRunId, atSeq, wanted);
    const { runId, duplicate } = await ctx.client.forkRun({
      sourceRunId,
      atSeq,
      ...(wanted === undefined ? {} : { runId: wanted }),
    });
    const follow = booleanFlag(args, 'follow');
    const summary = { runId, sourceRunId, atSeq, duplicate };
    if (ctx.json && follow) ctx.out.jsonLine(summary);
    else if (ctx.json) ctx.out.json(summary);
    else
      ctx.out.line(
        `forked ${sourceRunId} at seq ${atSeq} into ${runId}${duplicate ? ' (already requested)' : ''}; dura watch ${runId} follows it`,
      );
    if (!follow) return EXIT.ok;
    return followRun(ctx, runId, 1);
  },
};
