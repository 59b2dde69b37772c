import type { JetStreamClient } from '@nats-io/jetstream';
import { eq } from 'drizzle-orm';
import {
  DEFAULT_TENANT,
  ForkBodySchema,
  FORK_VERSION,
  formatIssues,
  SUBJECTS,
  type ConsoleSession,
  type ForkRequest,
} from '@dura/contracts';
import type { Db } from '@dura/db';
import { ALL_TENANTS, SCOPES, type Caller } from './auth/caller';
import type { ApiRoute } from './auth/guard';
import { publishCommand } from './door-write';
import { BadQuery, runIdParam } from './query-params';
import { assertVisible } from './run-access';
import { runs } from './db/schema';
import { readJson } from './request-body';
import { tenantRunId } from './tenant-ids';
import { holdingSlot, type StreamSlots } from './stream-slots';
import { openTokenStream, type TokenStreamDeps } from './token-stream';

export interface ConsoleRouteDeps {
  db: Db;
  js: JetStreamClient;
  /** The run's live model text (`GET /runs/:id/tokens`). */
  tokens: TokenStreamDeps;
  slots: StreamSlots;
  tracesUrl?: string;
}

/**
 * The routes the console needs beyond the read API: the caller's session, a run's model text as it streams
 * (from `DURA_TOKENS`, as Server-Sent Events a client resumes with `Last-Event-ID`), and forking a run.
 */
export function consoleRoutes(deps: ConsoleRouteDeps, unknownRun: (id: string) => Error): ApiRoute[] {
  return [
    {
      method: 'GET',
      path: '/console/session',
      scope: 'read',
      handle: ({ caller }) => Promise.resolve({ status: 200, body: sessionOf(caller, deps.tracesUrl) }),
    },
    {
      method: 'GET',
      path: '/runs/:id/tokens',
      scope: 'read',
      async handle({ params, req, caller }) {
        const id = runIdParam(params);
        await assertVisible(deps.db, caller, id, () => unknownRun(id));
        const response = openTokenStream(deps.tokens, id, req);
        const slot = deps.slots.acquire(caller, req);
        if ('refused' in slot) return slot.refused;
        return holdingSlot(response, slot.release);
      },
    },
    {
      method: 'POST',
      path: '/runs/:id/fork',
      // A fork starts a new run (its calls run again, and may charge again): as much as a submit.
      scope: 'submit',
      async handle({ params, req, caller }) {
        const sourceRunId = runIdParam(params);
        const parsed = ForkBodySchema.safeParse(await readJson(req, false));
        if (!parsed.success)
          throw new BadQuery(
            `the body of a fork request is invalid: ${formatIssues(parsed.error).join('; ')}; send {"atSeq": <seq>}`,
            'bad_body',
          );
        await assertVisible(deps.db, caller, sourceRunId, () => unknownRun(sourceRunId));
        const runId =
          parsed.data.runId === undefined
            ? `fork_${crypto.randomUUID().replaceAll('-', '')}`
            : tenantRunId(await forkTenant(deps.db, caller, sourceRunId), parsed.data.runId, 'the runId');
        const request: ForkRequest = { v: FORK_VERSION, sourceRunId, atSeq: parsed.data.atSeq, runId };
        const ack = await publishCommand(deps.js, {
          subject: SUBJECTS.fork,
          body: request,
          msgID: `fork:${runId}`,
          runId,
          what: `the fork of run ${sourceRunId} at seq ${request.atSeq}`,
        });
        return { status: 202, body: { runId, duplicate: ack.duplicate } };
      },
    },
  ];
}

/** The tenant of a fork: the source run's (a tenant's caller sees only its own runs). */
async function forkTenant(db: Db, caller: Caller, sourceRunId: string): Promise<string> {
  if (caller.tenant !== ALL_TENANTS) return caller.tenant;
  const [row] = await db.select({ tenant: runs.tenant }).from(runs).where(eq(runs.runId, sourceRunId));
  return row?.tenant ?? DEFAULT_TENANT;
}

/** The session the console shows: the caller's name, tenant and scopes in the API's order. */
export function sessionOf(caller: Caller, tracesUrl: string | undefined): ConsoleSession {
  return {
    name: caller.name,
    tenant: caller.tenant,
    scopes: SCOPES.filter((scope) => caller.scopes.has(scope)),
    ...(tracesUrl === undefined ? {} : { tracesUrl }),
  };
}
