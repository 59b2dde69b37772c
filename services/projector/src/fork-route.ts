import type { JetStreamClient } from '@nats-io/jetstream';
import { asc, eq } from 'drizzle-orm';
import {
  DEFAULT_TENANT,
  ForkBodySchema,
  FORK_VERSION,
  FORK_WITH_EDIT_VERSION,
  formatIssues,
  SUBJECTS,
  type ForkEdit,
  type ForkRequest,
  type RunEvent,
} from '@dura/contracts';
import { planFork } from '@dura/core';
import type { Db } from '@dura/db';
import { ALL_TENANTS, type Caller } from './auth/caller';
import type { ApiRoute } from './auth/guard';
import { publishCommand } from './command-door';
import { BadQuery, runIdParam } from './query-params';
import { assertVisible } from './run-access';
import { runEvents, runs } from './db/schema';
import { readJson } from './request-body';
import { tenantRunId } from './tenant-ids';

const BODY_HINT =
  'send {"atSeq": <seq>}, optionally with "edit": {"input": <json>} and/or {"toolResult": {"callId": "<call>", "output": <json>}}';

/**
 * `POST /runs/:id/fork`: publishes a fork request on `dura.fork`. An edit is recorded as the caller's (its
 * name from the credential, never from the body), and checked against the projected source first, so an
 * edit that cannot be made (an unknown or failed call, a value a later decision already used) is a 400 now
 * rather than a rejected run later; the planner checks again against the log.
 */
export function forkRoute(
  deps: { db: Db; js: JetStreamClient },
  unknownRun: (id: string) => Error,
): ApiRoute {
  return {
    method: 'POST',
    path: '/runs/:id/fork',
    // A fork starts a new run (its calls run again, and may charge again): as much as a submit.
    scope: 'submit',
    async handle({ params, req, caller }) {
      const sourceRunId = runIdParam(params);
      const parsed = ForkBodySchema.safeParse(await readJson(req, false));
      if (!parsed.success)
        throw new BadQuery(
          `the body of a fork request is invalid: ${formatIssues(parsed.error).join('; ')}; ${BODY_HINT}`,
          'bad_body',
        );
      await assertVisible(deps.db, caller, sourceRunId, () => unknownRun(sourceRunId));
      const runId =
        parsed.data.runId === undefined
          ? `fork_${crypto.randomUUID().replaceAll('-', '')}`
          : tenantRunId(await forkTenant(deps.db, caller, sourceRunId), parsed.data.runId, 'the runId');
      const { atSeq } = parsed.data;
      const edit: ForkEdit | undefined = parsed.data.edit
        ? { ...parsed.data.edit, by: caller.name }
        : undefined;
      if (edit) await precheckEdit(deps.db, sourceRunId, atSeq, runId, edit);
      const request: ForkRequest = {
        v: edit ? FORK_WITH_EDIT_VERSION : FORK_VERSION,
        sourceRunId,
        atSeq,
        runId,
        ...(edit ? { edit } : {}),
      };
      const ack = await publishCommand(deps.js, {
        subject: SUBJECTS.fork,
        body: request,
        msgID: `fork:${runId}`,
        runId,
        what: `the fork of run ${sourceRunId} at seq ${atSeq}`,
      });
      return { status: 202, body: { runId, duplicate: ack.duplicate } };
    },
  };
}

/**
 * Refuses an edit the projected source shows cannot be made. Only when the projection holds the source up to
 * the fork point: otherwise (or when the source may still settle) the planner, reading the log, decides.
 */
async function precheckEdit(db: Db, sourceRunId: string, atSeq: number, runId: string, edit: ForkEdit) {
  const rows = await db
    .select({ seq: runEvents.seq, event: runEvents.event })
    .from(runEvents)
    .where(eq(runEvents.runId, sourceRunId))
    .orderBy(asc(runEvents.seq));
  const source = rows.map((row) => ({ ...(row.event as RunEvent), seq: row.seq }));
  if ((source.at(-1)?.seq ?? 0) < atSeq) return;
  const plan = planFork({ source, atSeq, runId, ts: new Date(0).toISOString(), edit });
  if (!plan.ok && !plan.problem.retryable) throw new BadQuery(plan.problem.message, plan.problem.code);
}

/** The tenant of a fork: the source run's (a tenant's caller sees only its own runs). */
async function forkTenant(db: Db, caller: Caller, sourceRunId: string): Promise<string> {
  if (caller.tenant !== ALL_TENANTS) return caller.tenant;
  const [row] = await db.select({ tenant: runs.tenant }).from(runs).where(eq(runs.runId, sourceRunId));
  return row?.tenant ?? DEFAULT_TENANT;
}
