import { booleanFlag, intFlag, positional } from '../args';
import type { CommandModule } from '../command';
import { endedBefore, exitForStatus, followRun } from '../follow';

export const watch: CommandModule = {
  name: 'watch',
  usage: 'dura watch <run-id> [--from SEQ] [--live]',
  flags: {
    from: {
      type: 'string',
      value: 'SEQ',
      description: 'first stream seq to print (default 1: the whole run)',
    },
    live: {
      type: 'boolean',
      description:
        "also stream the model's text as it answers (kept 15 minutes, so a watch started mid-answer shows it)",
    },
  },
  positionals: { min: 1, max: 1 },
  help: `Events come from the run's subject on JetStream: history, then live, each once and in order, and the
watch survives a NATS restart. To resume an interrupted watch, pass the last seq you saw + 1 as --from.
With --live, the model's answer streams token by token between the events (under --json as lines
{ "live": { "decision", "call", "attempt", "delta" } }). The text is kept for 15 minutes, so a watch started
mid-answer shows it from the start. When a model call is asked again (its planner crashed, say), the watch
says so ("discard" lines under --json) and the new attempt's text follows; the recorded answer is the thought.

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
    const stopLive = new AbortController();
    const stop = (): void => stopLive.abort();
    ctx.signal.addEventListener('abort', stop, { once: true });
    const live = ctx.client
      .followRunTokens(
        runId,
        ({ event }) => {
          if (event.event === 'token') {
            const { decision, call, attempt, delta } = event.data;
            if (ctx.json) return ctx.out.jsonLine({ live: { decision, call, attempt, delta } });
            if (!streaming) ctx.out.write(`       … `);
            streaming = true;
            ctx.out.write(delta);
          } else if (event.event === 'discard') {
            if (ctx.json) return ctx.out.jsonLine({ discard: event.data });
            if (streaming) ctx.out.write('\n');
            streaming = false;
            ctx.out.line(`       (the text above is dropped: the model was asked again)`);
          }
        },
        { signal: stopLive.signal },
      )
      .catch((err: unknown) => ctx.out.note(`live text stopped: ${(err as Error).message}`));
    try {
      // An event ends the streamed answer's line.
      return await followRun(ctx, runId, from, {
        historyUntil,
        beforeEvent: () => {
          if (streaming) ctx.out.write('\n');
          streaming = false;
        },
      });
    } finally {
      ctx.signal.removeEventListener('abort', stop);
      stop();
      await live;
    }
  },
};
