import { APPROVE_SIGNAL, REJECT_SIGNAL } from '@dura/core';
import type { JsonObject } from '@dura/contracts';
import { positional, stringFlag } from '../args';
import { EXIT, type CommandModule, type CommandContext, type ParsedArgs } from '../command';

const callFlag = {
  type: 'string' as const,
  value: 'CALL_ID',
  description: 'the call to answer when several wait (default: the oldest)',
};

async function answer(name: string, args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const runId = positional(args, 0, 'run id');
  const callId = stringFlag(args, 'call');
  const reason = stringFlag(args, 'reason');
  const payload: JsonObject = {
    ...(callId === undefined ? {} : { callId }),
    ...(reason === undefined ? {} : { reason }),
  };
  const sent = await ctx.client.signal(runId, name, { mustExist: true, payload });
  if (ctx.json) ctx.out.json({ runId, name, ...payload, ...sent });
  else ctx.out.line(`sent ${name} to ${runId}${callId ? ` for ${callId}` : ''} (signal id ${sent.signalId})`);
  return EXIT.ok;
}

export const approve: CommandModule = {
  name: 'approve',
  summary: 'Approve a call that waits for approval; it is then dispatched',
  usage: 'dura approve <run-id> [--call CALL_ID]',
  flags: { call: callFlag },
  positionals: { min: 1, max: 1 },
  help: `Sends the signal approve with { callId }. A call waits for approval when its tool is listed in the
agent's approvals or defined with requiresApproval; \`dura get <run>\` shows the waits.
  dura approve run_1 --call call-3`,
  run: (args, ctx) => answer(APPROVE_SIGNAL, args, ctx),
};

export const reject: CommandModule = {
  name: 'reject',
  summary: 'Reject a call that waits for approval; the model sees the rejection',
  usage: 'dura reject <run-id> [--call CALL_ID] [--reason TEXT]',
  flags: { call: callFlag, reason: { type: 'string', value: 'TEXT', description: 'why, for the model' } },
  positionals: { min: 1, max: 1 },
  help: `Sends the signal reject with { callId, reason }: the call fails with code rejected, never runs.
  dura reject run_1 --call call-3 --reason "not on a Friday"`,
  run: (args, ctx) => answer(REJECT_SIGNAL, args, ctx),
};
