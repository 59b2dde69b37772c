import { formatEvent } from '@dura/client';
import { positional } from '../args';
import { EXIT, UsageError, type CommandModule } from '../command';

export const why: CommandModule = {
  name: 'why',
  summary: "Show why an event happened: it, its cause, its cause's cause, back to the request",
  usage: 'dura why <run-id> <seq>',
  flags: {},
  positionals: { min: 2, max: 2 },
  help: `Follows meta.causationId from the event at SEQ back to the run's root (GET /runs/:id/events/:seq/causes
on --api), printing the chain from the root down: which decision led to a call, which call to a result.
--json prints { chain } with the event at SEQ first, as the API answers.

Exit code: 0; 3 when the run or the seq does not exist.

Example:
  dura why run_1 7`,
  async run(args, ctx) {
    const runId = positional(args, 0, 'run id');
    const raw = positional(args, 1, 'seq');
    if (!/^[1-9]\d{0,15}$/.test(raw))
      throw new UsageError(
        `seq must be a positive integer, got "${raw}" (dura events ${runId} lists the seqs)`,
      );
    const seq = Number(raw);
    const chain = await ctx.client.causes(runId, seq);
    if (ctx.json) {
      ctx.out.json({ chain });
      return EXIT.ok;
    }
    // The root first: read top-down as "this, so this, so this".
    const ordered = [...chain].reverse();
    ordered.forEach((event, depth) => {
      const arrow = depth === 0 ? '' : `${'  '.repeat(depth - 1)}└ `;
      ctx.out.line(`${arrow}${formatEvent(event)}`);
    });
    return EXIT.ok;
  },
};
