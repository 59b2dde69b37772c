import {
  ContractViolation,
  FORK_VERSION,
  FORK_WITH_EDIT_VERSION,
  ForkRequestSchema,
  formatIssues,
  SUBJECTS,
  type ForkChanges,
} from '@dura/contracts';
import type { NatsReads } from './nats-reads';

export interface ForkRunInput {
  /** The run to fork. */
  sourceRunId: string;
  /** Stream sequence of the source's last event to keep (`dura events <id>` shows them). */
  atSeq: number;
  /** The new run's id (default: a fresh `fork_…` id). Doubles as the fork's idempotency key. */
  runId?: string;
  /**
   * Fork with an edited input (a fork at the source's first event, before any decision) and/or an edited
   * tool result (of a completed call no decision has used yet). The fork records what it replaced.
   */
  edit?: ForkChanges;
  /** Who edits, recorded with the edit (required with `edit`). */
  editedBy?: string;
}

export interface ForkRunResult {
  runId: string;
  /** True when a fork with this run id was already requested (within the dedupe window): nothing new starts. */
  duplicate: boolean;
}

/**
 * Asks the planner to fork a run: a new run whose log starts as the source's log up to and including
 * `atSeq`, which the planner then drives like any run. Steps after the fork point run again under the new
 * run's idempotency keys; steps before it keep their recorded results and are not run again. The planner
 * refuses a fork of an unknown run, at a seq that is not one of the source's events, or into a run id
 * already used: the new run id then gets `run_rejected` (watch it to learn why) and the request is
 * dead-lettered on `dura.dlq.forks`. With `edit`, the fork carries an edited input or tool result (see
 * docs/console.md, "Fork with edited state"); an edit that cannot be made is refused the same way.
 *
 * @example
 * const { runId } = await client.forkRun({ sourceRunId: 'deploy-42', atSeq: 118 });
 * for await (const event of client.watchRun(runId)) console.log(event.seq, event.type);
 * // The quote of call-1 said 100; continue as if it had said 90 (call-1 does not run again).
 * await client.forkRun({ sourceRunId: 'deploy-42', atSeq: 57, edit: { toolResult: { callId: 'call-1', output: { price: 90 } } }, editedBy: 'alice' });
 */
export async function forkRun(
  nats: () => Promise<Pick<NatsReads, 'js' | 'side'>>,
  input: ForkRunInput,
): Promise<ForkRunResult> {
  const runId = input.runId ?? `fork_${crypto.randomUUID().replaceAll('-', '')}`;
  if (input.edit && input.editedBy === undefined)
    throw new ContractViolation('fork request is invalid', ['editedBy: name who edits; the fork records it']);
  const parsed = ForkRequestSchema.safeParse({
    v: input.edit ? FORK_WITH_EDIT_VERSION : FORK_VERSION,
    sourceRunId: input.sourceRunId,
    atSeq: input.atSeq,
    runId,
    ...(input.edit ? { edit: { ...input.edit, by: input.editedBy } } : {}),
  });
  if (!parsed.success) throw new ContractViolation('fork request is invalid', formatIssues(parsed.error));
  const { js, side } = await nats();
  try {
    const ack = await side.publishTraced(js, {
      subject: SUBJECTS.fork,
      msgID: `fork:${runId}`,
      runId,
      body: JSON.stringify(parsed.data),
    });
    return { runId, duplicate: ack.duplicate };
  } catch (err) {
    throw side.mapAppendError(err, runId, undefined);
  }
}
