import { createHash } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import { eq } from 'drizzle-orm';
import type { z } from 'zod';
import {
  DEFAULT_TENANT,
  RUN_REQUEST_VERSION,
  RunIdSchema,
  SUBJECTS,
  SubmitAcceptedSchema,
  SubmitBodySchema,
  type RunRequest,
} from '@dura/contracts';
import { canonicalJson } from '@dura/core';
import type { Db } from '@dura/db';
import type { HttpResponse } from '@dura/service-kit';
import { ALL_TENANTS, type Caller } from './auth/caller';
import type { ApiRoute } from './auth/guard';
import { postRoute } from './body-route';
import { apiSubmissions, runs } from './db/schema';
import { publishCommand } from './command-door';
import { gatedSubmit } from './gated-submit';
import { BadQuery } from './query-params';
import { tenantRunId } from './tenant-ids';

/** Body and answer of `POST /runs` (in @dura/contracts: the client reads the answer too). */
export { SubmitAcceptedSchema, SubmitBodySchema };

type TenantRequest = RunRequest & { runId: string; tenant: string };

const IDEMPOTENCY_HEADER = 'idempotency-key';

const refusal = (status: number, code: string, message: string): HttpResponse => ({
  status,
  body: { error: { code, message } },
});

/**
 * `POST /runs`: submits a run over HTTP with the caller's tenant. Idempotent on the key (`Idempotency-Key`
 * or `runId`), which names a run id in the tenant's namespace (`tenantRunId`): the same key with the same
 * body answers the same run, with another body 409. The request is published to `dura.submit` under its run
 * id, so the planner's intake checks it exactly as a NATS submit.
 */
export function submitRoute(deps: { db: Db; js: JetStreamClient }): ApiRoute {
  const body = {
    schema: SubmitBodySchema,
    what: 'a run request',
    holds: 'a run request such as {"agent": {"kind": "agent", "name": "support"}, "input": {...}}',
  };
  return postRoute('/runs', 'submit', body, (parsed, { req, caller }) =>
    submitRun(deps, caller, parsed, keyOf(req.headers[IDEMPOTENCY_HEADER], parsed.runId)),
  );
}

/**
 * Submits `body` for `caller` under the idempotency key `key` (a run id in the caller's tenant namespace; a
 * fresh id without one): 202 with the run id, 409 when the key was used with another request, 403 when the
 * body names a tenant the caller may not submit for. Shared by `POST /runs` and the chat route.
 */
export async function submitRun(
  deps: { db: Db; js: JetStreamClient },
  caller: Caller,
  body: z.infer<typeof SubmitBodySchema>,
  key: string | undefined,
): Promise<HttpResponse> {
  const tenant = tenantOf(caller, body.tenant);
  if (typeof tenant !== 'string') return tenant;
  // A chosen key names a run id in the tenant's own namespace: another tenant's equal key is another run.
  const runId =
    key === undefined
      ? `run_${crypto.randomUUID().replaceAll('-', '')}`
      : tenantRunId(tenant, key, key === body.runId ? 'the runId' : 'the Idempotency-Key');
  const { debounce, dedupe, ...plain } = body;
  const requestOf = (id: string): TenantRequest => ({ ...plain, v: RUN_REQUEST_VERSION, runId: id, tenant });
  if (debounce || dedupe)
    return gatedSubmit(deps, {
      tenant,
      debounce,
      dedupe,
      key,
      runId,
      request: requestOf,
      submit: (id) => publishOnce(deps, caller, requestOf(id)),
    });
  return publishOnce(deps, caller, requestOf(runId));
}

/** The ordinary submit: remembers the run id with the hash of its request (409 on another), then publishes. */
async function publishOnce(
  deps: { db: Db; js: JetStreamClient },
  caller: Caller,
  request: TenantRequest,
): Promise<HttpResponse> {
  const { runId, tenant } = request;
  const bodyHash = createHash('sha256').update(canonicalJson(request), 'utf8').digest('hex');

  const [existingRun] = await deps.db.select({ tenant: runs.tenant }).from(runs).where(eq(runs.runId, runId));
  const inserted = await deps.db
    .insert(apiSubmissions)
    .values({ runId, bodyHash, tenant, caller: caller.name })
    .onConflictDoNothing()
    .returning({ runId: apiSubmissions.runId });
  let duplicate = false;
  if (inserted.length === 0) {
    const [prior] = await deps.db.select().from(apiSubmissions).where(eq(apiSubmissions.runId, runId));
    if (prior?.bodyHash !== bodyHash) return conflict(runId);
    duplicate = true;
  } else if (existingRun && existingRun.tenant !== tenant) {
    // Submitted before by other means (NATS) for another tenant: a conflict that reveals nothing more.
    await deps.db.delete(apiSubmissions).where(eq(apiSubmissions.runId, runId));
    return conflict(runId);
  }
  // Published again for a duplicate too: the first answer may have been lost before the publish.
  await publishCommand(deps.js, {
    subject: SUBJECTS.submit,
    body: request,
    msgID: runId,
    runId,
    what: `the request of run ${runId}`,
  });
  const path = `/runs/${runId}`;
  return {
    status: 202,
    headers: { location: path },
    body: {
      outcome: 'started',
      runId,
      duplicate,
      links: { run: path, events: `${path}/events`, stream: `${path}/stream` },
    },
  };
}

/** The id the caller chose (header or body), if any. */
function keyOf(header: string | string[] | undefined, bodyRunId: string | undefined): string | undefined {
  if (Array.isArray(header)) throw new BadQuery('send one Idempotency-Key header, not several', 'bad_header');
  if (header === undefined) return bodyRunId;
  const parsed = RunIdSchema.safeParse(header);
  if (!parsed.success)
    throw new BadQuery(
      'the Idempotency-Key header is not a valid run id: 1 to 128 letters, digits, "_" or "-"',
      'bad_header',
    );
  if (bodyRunId !== undefined && bodyRunId !== header)
    throw new BadQuery(
      `the Idempotency-Key header (${header}) and the body's runId (${bodyRunId}) differ: send one, or the same in both`,
      'bad_header',
    );
  return parsed.data;
}

/** The run's tenant: the caller's own; an operator (tenant `*`) names one in the body or gets `default`. */
function tenantOf(caller: Caller, asked: string | undefined): string | HttpResponse {
  if (caller.tenant === ALL_TENANTS) return asked ?? DEFAULT_TENANT;
  if (asked === undefined || asked === caller.tenant) return caller.tenant;
  return refusal(
    403,
    'tenant_forbidden',
    `the credential "${caller.name}" submits for tenant "${caller.tenant}", not "${asked}": leave "tenant" out or use a token of that tenant`,
  );
}

function conflict(runId: string): HttpResponse {
  return refusal(
    409,
    'run_id_conflict',
    `run id ${runId} was already submitted with a different request: submit with a new run id (or Idempotency-Key)`,
  );
}
