import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { RunNotFound } from '@dura/client';
import { DuraError, type ForkChanges, type ForkEdit, type JsonValue, type RunEvent } from '@dura/contracts';
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
  edit?: ForkEdit,
): Promise<void> {
  const source: RunEvent[] = await ctx.client.readEvents(sourceRunId);
  if (source.length === 0) throw new RunNotFound(sourceRunId);
  const ts = new Date().toISOString();
  const plan = planFork({ source, atSeq, runId: runId ?? 'precheck', ts, ...(edit ? { edit } : {}) });
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

/** JSON text, or `@path` of a file holding it; a UsageError naming `what` otherwise. */
async function jsonOrFile(text: string, what: string): Promise<JsonValue> {
  let json = text;
  if (text.startsWith('@')) {
    const path = resolve(text.slice(1));
    json = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read ${path} for ${what} (${err.code ?? err.message}): check the path`);
    });
  }
  try {
    return JSON.parse(json) as JsonValue;
  } catch (err) {
    throw new UsageError(`${what} is not valid JSON (${(err as Error).message}); give JSON text or @file`);
  }
}

/** The edit --input and --tool-result ask for, or undefined when neither is given. */
async function editOf(args: Parameters<CommandModule['run']>[0]): Promise<ForkChanges | undefined> {
  const input = stringFlag(args, 'input');
  const result = stringFlag(args, 'tool-result');
  if (input === undefined && result === undefined) return undefined;
  const edit: ForkChanges = {};
  if (input !== undefined) edit.input = await jsonOrFile(input, '--input');
  if (result !== undefined) {
    const at = result.indexOf('=');
    if (at <= 0) throw new UsageError(`--tool-result takes CALL_ID=JSON or CALL_ID=@file, got "${result}"`);
    const callId = result.slice(0, at);
    edit.toolResult = { callId, output: await jsonOrFile(result.slice(at + 1), `--tool-result ${callId}`) };
  }
  return edit;
}

export const fork: CommandModule = {
  name: 'fork',
  usage:
    'dura fork <run-id> --at SEQ [--input JSON|@FILE] [--tool-result CALL=JSON|@FILE] [--by NAME] [--run-id ID] [--follow]',
  flags: {
    at: { type: 'string', value: 'SEQ', description: 'the last event of the source to keep (required)' },
    input: {
      type: 'string',
      value: 'JSON|@FILE',
      description: "fork with this input instead of the source's (a fork at the source's first event)",
    },
    'tool-result': {
      type: 'string',
      value: 'CALL=JSON|@FILE',
      description:
        'fork with this result of call CALL instead of the recorded one (the call does not run again)',
    },
    by: {
      type: 'string',
      value: 'NAME',
      description: 'who edits, recorded with the edit (default: your user name)',
    },
    'run-id': { type: 'string', value: 'ID', description: "the new run's id (default: a fresh fork_… id)" },
    follow: { type: 'boolean', description: "print the new run's events until it ends" },
  },
  positionals: { min: 1, max: 1 },
  help: `The new run's log starts with the source's request and copies of its events up to and including
the one at SEQ (dura events <run-id> lists them); the planner then decides what comes next as in any run.
Steps recorded before SEQ keep their results and are not run again; steps after it run again, under the new
run's idempotency keys. A call requested before SEQ whose result came after it is not run again either:
the fork copies its recorded result. The source run is not changed. --json prints { runId, sourceRunId,
atSeq, duplicate, edited } (then the events as JSON lines with --follow).

Fork with edited state: --tool-result CALL=JSON gives the fork's copy of call CALL's result the value JSON
(the call is not run again: its effect happened once, in the source); the run must not have decided
anything from that result by SEQ, so fork at the seq of the result itself. --input JSON starts the fork
with another input; only at the source's first event, before any decision. The fork records what was
edited, the original value's sha256 and --by. The edit passes the checks a submitted input and a tool's
real result pass (plan, secrets sealed, the tool's declared output).

Examples:
  dura fork run_42 --at 118
  dura fork run_42 --at 118 --run-id run_42-retry --follow
  dura fork run_42 --at 57 --tool-result 'call-1={"price": 90}' --follow
  dura fork run_42 --at 41 --input @input.json

Exit code: 0 once requested (with --follow: the new run's outcome, 0 completed, 1 otherwise); 3 when the
source or the seq does not exist; 5 when the source had ended by SEQ or the new run id is taken, or the
edit cannot be made.`,
  async run(args, ctx) {
    const sourceRunId = positional(args, 0, 'run id');
    const atSeq = intFlag(args, 'at', { min: 1 });
    if (atSeq === undefined) throw new UsageError('--at SEQ is required: the seq of the last event to keep');
    const wanted = stringFlag(args, 'run-id');
    const changes = await editOf(args);
    const editedBy = stringFlag(args, 'by') ?? userInfo().username;
    const edit = changes ? { ...changes, by: editedBy } : undefined;
    await precheck(ctx, sourceRunId, atSeq, wanted, edit);
    const { runId, duplicate } = await ctx.client.forkRun({
      sourceRunId,
      atSeq,
      ...(wanted === undefined ? {} : { runId: wanted }),
      ...(changes ? { edit: changes, editedBy } : {}),
    });
    const follow = booleanFlag(args, 'follow');
    const edited = [
      changes?.input !== undefined ? 'input' : '',
      changes?.toolResult ? `result of ${changes.toolResult.callId}` : '',
    ].filter((what) => what !== '');
    const summary = { runId, sourceRunId, atSeq, duplicate, edited };
    if (ctx.json && follow) ctx.out.jsonLine(summary);
    else if (ctx.json) ctx.out.json(summary);
    else
      ctx.out.line(
        `forked ${sourceRunId} at seq ${atSeq} into ${runId}${edited.length > 0 ? ` with edited ${edited.join(' and ')} (by ${editedBy})` : ''}${duplicate ? ' (already requested)' : ''}; dura watch ${runId} follows it`,
      );
    if (!follow) return EXIT.ok;
    return followRun(ctx, runId, 1);
  },
};
