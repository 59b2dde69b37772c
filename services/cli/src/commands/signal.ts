import { jsonFlag, positional, stringFlag } from '../args';
import { EXIT, type CommandModule } from '../command';

export const signal: CommandModule = {
  name: 'signal',
  usage: 'dura signal <run-id> <name> [--payload JSON] [--id SIGNAL_ID]',
  flags: {
    payload: { type: 'string', value: 'JSON', description: 'the signal payload' },
    id: {
      type: 'string',
      value: 'SIGNAL_ID',
      description: 'idempotency key: the same id again records nothing new',
    },
  },
  positionals: { min: 2, max: 2 },
  help: `The signal goes to the planner on dura.signal and is recorded on the run's log as signal_received.
An operator settles an interrupted unsafe call with confirm or skip:
  dura signal run_1 confirm --payload '{"callId":"call-3","result":{"chargeId":"ch_123"}}'
  dura signal run_1 skip --payload '{"callId":"call-3"}'
--json prints { runId, name, signalId, duplicate }.

Exit code: 0 once sent; 3 when the run has no events.`,
  async run(args, ctx) {
    const runId = positional(args, 0, 'run id');
    const name = positional(args, 1, 'signal name');
    const payload = jsonFlag(args, 'payload');
    const signalId = stringFlag(args, 'id');
    const sent = await ctx.client.signal(runId, name, {
      mustExist: true,
      ...(payload === undefined ? {} : { payload }),
      ...(signalId === undefined ? {} : { signalId }),
    });
    if (ctx.json) ctx.out.json({ runId, name, ...sent });
    else
      ctx.out.line(
        sent.duplicate
          ? `signal ${sent.signalId} was already sent to ${runId}; nothing new recorded`
          : `sent ${name} to ${runId} (signal id ${sent.signalId})`,
      );
    return EXIT.ok;
  },
};
