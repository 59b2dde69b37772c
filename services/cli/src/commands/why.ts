import { formatEvent, RunNotFound } from '@dura/client';
import { positional } from '../args';
import { EXIT, UsageError, type CommandContext, type CommandModule } from '../command';

/** The seq of the run's latest event, from its log. */
async function lastSeqOf(ctx: CommandContext, runId: string): Promise<number> {
  const last = await ctx.client.lastSeq(runId);
  if (last === 0) throw new RunNotFound(runId);
  return last;
}

export const why: CommandModule = {
  name: 'why',
  usage: 'dura why <run-id> <seq|last>',
  flags: {},
  positionals: { min: 2, max: 2 },
  help: `Follows meta.causationId from the event at SEQ back to the run's root (GET /runs/:id/events/:seq/causes
on --api), printing the chain from the root down: which decision led to a call, which call to a result, and
which approval (wait_requested, then the signal_received answering it) let a call run.
\`last\` stands for the run's latest event: why the run is where it is.
--json prints { chain } with the event at SEQ first, as the API answers.

Exit code: 0; 3 when the run or the seq does not exist.

Examples:
  dura why run_1 7
  dura why run_1 last`,
  async run(args, ctx) {
    const runId = positional(args, 0, 'run id');
    const raw = positional(args, 1, 'seq');
    if (raw !== 'last' && !/^[1-9]\d{0,15}$/.test(raw))
      throw new UsageError(
        `seq must be a positive integer or "last", got "${raw}" (dura events ${runId} lists the seqs)`,
      );
    const seq = raw === 'last' ? await lastSeqOf(ctx, runId) : Number(raw);
    const chain = await ctx.client.causes(runId, seq);
    if (ctx.json) {
      ctx.out.json({ chain });
      return EXIT.ok;
    }
    // The root first: read top-down as "this, so this, so this".
    [...chain]
      .reverse()
      .forEach((event, depth) => ctx.out.line(`${depth === 0 ? '' : '  ↳ '}${formatEvent(event)}`));
    return EXIT.ok;
  },
};
