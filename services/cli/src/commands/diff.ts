import { RunNotFound } from '@dura/client';
import type { RunEvent } from '@dura/contracts';
import { diffRuns, type DiffSide } from '@dura/core';
import { positional } from '../args';
import { EXIT, type CommandContext, type CommandModule } from '../command';

async function logOf(ctx: CommandContext, runId: string): Promise<RunEvent[]> {
  const events = await ctx.client.readEvents(runId);
  if (events.length === 0) throw new RunNotFound(runId);
  return events;
}

function describe(runId: string, side: DiffSide | null): string {
  return side === null
    ? `${runId}: no further decision`
    : `${runId}: seq ${side.seq} ${side.type}: ${side.summary}`;
}

export const diff: CommandModule = {
  name: 'diff',
  usage: 'dura diff <run-a> <run-b>',
  flags: {},
  positionals: { min: 2, max: 2 },
  help: `Walks both logs in step order and compares each thought's decision (kind; tools and arguments, output
or error) and each intent's tool and arguments. Ids, idempotency keys, sequences, times, token usage and
tool results are not compared, so a fork and its source agree up to where they decided differently.
--json prints { a, b, divergence } where divergence is null or { step, a: {seq, type, summary}, b: … }.

Exit code: 0 the runs decided the same; 1 they diverge (the first divergence is printed); 3 when a run has
no events.`,
  async run(args, ctx) {
    const a = positional(args, 0, 'first run id');
    const b = positional(args, 1, 'second run id');
    const [left, right] = await Promise.all([logOf(ctx, a), logOf(ctx, b)]);
    const divergence = diffRuns(left, right);
    if (ctx.json) ctx.out.json({ a, b, divergence });
    else if (divergence === null) ctx.out.line(`no divergence: ${a} and ${b} decided the same`);
    else {
      ctx.out.line(`diverged at step ${divergence.step}:`);
      ctx.out.line(`  a  ${describe(a, divergence.a)}`);
      ctx.out.line(`  b  ${describe(b, divergence.b)}`);
    }
    return divergence === null ? EXIT.ok : EXIT.runFailed;
  },
};
