import { verdictFor } from '@dura/client';
import { positional, stringFlag } from '../args';
import { EXIT, type CommandModule, type CommandContext, type ParsedArgs } from '../command';

const callFlag = {
  type: 'string' as const,
  value: 'CALL_ID',
  description:
    'the call whose approval (or ctx.approve wait) to answer when several wait (default: the oldest)',
};

/** Sends the verdict to the run's open approval wait, whichever kind it is; refuses (exit 3) when none is open. */
async function answer(approved: boolean, args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const runId = positional(args, 0, 'run id');
  const callId = stringFlag(args, 'call');
  const reason = stringFlag(args, 'reason');
  const state = await ctx.client.getRun(runId);
  const { name, payload } = verdictFor(state, { approved, reason }, { callId });
  const sent = await ctx.client.signal(runId, name, { mustExist: true, payload });
  if (ctx.json) ctx.out.json({ runId, name, payload, ...sent });
  else
    ctx.out.line(
      sent.duplicate
        ? `signal ${sent.signalId} was already sent to ${runId}; nothing new recorded`
        : `sent ${name} ${JSON.stringify(payload)} to ${runId} (signal id ${sent.signalId})`,
    );
  return EXIT.ok;
}

const HELP = `Answers the run's open approval wait, whichever kind it is: a call waiting for approval (a tool in the
agent's approvals or defined with requiresApproval, or ctx.tool(…, { approval })) gets the signal
approve/reject with { callId, approved }; a code agent's ctx.approve wait gets its own signal with
{ approved: true } or { approved: false, reason }. Only { "approved": true } approves. With several open
waits, --call picks one (default: the oldest); \`dura get <run>\` shows the waits.

Exit code: 0 once sent; 3 when the run does not exist or waits for no approval (the error names what it
waits for and the command that answers it).`;

export const approve: CommandModule = {
  name: 'approve',
  usage: 'dura approve <run-id> [--call CALL_ID]',
  flags: { call: callFlag },
  positionals: { min: 1, max: 1 },
  help: `${HELP}
  dura approve run_1
  dura approve run_1 --call call-3`,
  run: (args, ctx) => answer(true, args, ctx),
};

export const reject: CommandModule = {
  name: 'reject',
  usage: 'dura reject <run-id> [--call CALL_ID] [--reason TEXT]',
  flags: {
    call: callFlag,
    reason: { type: 'string', value: 'TEXT', description: 'why, for the model or the code' },
  },
  positionals: { min: 1, max: 1 },
  help: `${HELP}
A rejected call fails with code rejected and never runs; ctx.approve resolves to { approved: false, reason }.
  dura reject run_1 --call call-3 --reason "not on a Friday"`,
  run: (args, ctx) => answer(false, args, ctx),
};
