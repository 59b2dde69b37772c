import { booleanFlag, intFlag, positional } from '../args';
import type { CommandModule } from '../command';
import { endedBefore, exitForStatus, followRun } from '../follow';

export const watch: CommandModule = {
  name: 'watch',
  summary: "Follow a run's events live, from the start or from a seq, until it ends",
  usage: 'dura watch <run-id> [--from SEQ] [--live]',
  flags: {
    from: {
      type: 'string',
      value: 'SEQ',
      description: 'first stream seq to print (default 1: the whole run)',
    },
    live: {
      type: 'boolean',
      description: "also stream the model's tokens as it answers (not stored: only while watching)",
    },
  },
  positionals: { min: 1, max: 1 },
  help: `Events come from the run's subject on JetStream: history, then live, each once and in order, and the
watch survives a NATS restart. To resume an interrupted watch, pass the last seq you saw + 1 as --from.
With --live, the model's answer streams token by token between the events (under --json as lines
{ "live": { "decision", "delta" } }); tokens are never stored, so a later watch shows only the thought.

Exit code: the run's outcome (0 completed, 1 failed, cancelled or rejected); 3 when the run has no events.`,
  async run(args, ctx) {
    const runId = positional(args, 0, 'run id');
    const from = intFlag(args, 'from', { min: 1 }) ?? 1;
    const ended = await endedBefore(ctx, runId, from);
    if (ended) {
      ctx.out.note(`run ${runId} ended (${ended.status}) at seq ${ended.seq}, before seq ${from}`);
      return exitForStatus(ended.status);
    }
    // What is in the log now is history: only a wait that is still open gets its next step printed.
    const historyUntil = await ctx.client.lastSeq(runId);
    if (!booleanFlag(args, 'live')) return followRun(ctx, runId, from, { historyUntil });
    let streaming = false;
    await ctx.client.onLiveTokens(
      runId,
      ({ decision, delta }) => {
        if (ctx.json) return ctx.out.jsonLine({ live: { decision, delta } });
        if (!streaming) ctx.out.write(`       … `);
        streaming = true;
        ctx.out.write(delta);
      },
      ctx.signal,
    );
    // An event ends the streamed answer's line.
    return followRun(ctx, runId, from, {
      historyUntil,
      beforeEvent: () => {
        if (streaming) ctx.out.write('\n');
        streaming = false;
      },
    });
  },
};
