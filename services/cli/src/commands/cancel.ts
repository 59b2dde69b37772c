import { isTerminal } from '@dura/core';
import { positional, stringFlag } from '../args';
import { EXIT, type CommandModule } from '../command';

export const cancel: CommandModule = {
  name: 'cancel',
  usage: 'dura cancel <run-id> [--reason TEXT] [--id SIGNAL_ID]',
  flags: {
    reason: { type: 'string', value: 'TEXT', description: 'why (default "cancelled with dura cancel")' },
    id: { type: 'string', value: 'SIGNAL_ID', description: 'idempotency key of the cancel signal' },
  },
  positionals: { min: 1, max: 1 },
  help: `Sends the signal named cancel with payload { reason }. A tool call already running finishes and is
recorded; nothing new starts. Follow the run to see it end: dura watch <run-id>.
--json prints { runId, signalId, duplicate, reason }.

Exit code: 0 once sent; 1 when the run had already ended (nothing sent); 3 when the run has no events.`,
  async run(args, ctx) {
    const runId = positional(args, 0, 'run id');
    const reason = stringFlag(args, 'reason') ?? 'cancelled with dura cancel';
    const signalId = stringFlag(args, 'id');
    const state = await ctx.client.getRun(runId);
    if (isTerminal(state.status)) {
      if (ctx.json) ctx.out.json({ runId, sent: false, status: state.status });
      ctx.out.error(`run ${runId} already ended (${state.status}); nothing to cancel`);
      return EXIT.runFailed;
    }
    const sent = await ctx.client.cancel(runId, { reason, ...(signalId === undefined ? {} : { signalId }) });
    if (ctx.json) ctx.out.json({ runId, sent: true, reason, ...sent });
    else
      ctx.out.line(`cancel sent to ${runId} (signal id ${sent.signalId}); dura watch ${runId} shows it end`);
    return EXIT.ok;
  },
};
