import type { DuraClient } from '@dura/client';
import { DuraError, RUN_REQUEST_VERSION, RunRequestSchema } from '@dura/contracts';
import { canonicalJson } from '@dura/core';

/**
 * Throws `run_id_conflict` when the run id of `request` is already used by a different request: the broker
 * would drop the new one as a duplicate (or the planner dead-letter it) and the CLI would follow the old run.
 * Resolves with whether the same request was already submitted.
 */
export async function checkRunIdReuse(
  client: DuraClient,
  request: Record<string, unknown>,
): Promise<boolean> {
  const runId = request.runId;
  if (typeof runId !== 'string') return false;
  const [first] = await client.readEvents(runId);
  if (first === undefined) return false;
  const parsed = RunRequestSchema.safeParse({ v: RUN_REQUEST_VERSION, ...request });
  // An invalid request is refused by submitRun with its issues; nothing to compare.
  if (!parsed.success) return false;
  const recorded = first.type === 'run_requested' ? first.data.request : undefined;
  if (recorded && canonicalJson(recorded) === canonicalJson(parsed.data)) return true;
  throw new DuraError(
    'run_id_conflict',
    `run id ${runId} is already used by ${recorded ? 'a different request' : 'a run that was refused'} ` +
      `(dura get ${runId} shows it); submit with a new --id, or leave --id out for a fresh one`,
  );
}
