import { and, asc, desc, eq, gte, lt, sql } from 'drizzle-orm';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connectionOf, createRunReader, createRunWakeups, RUN_TOKENS } from '@dura/event-store';
import type { Db } from '@dura/db';
import type { Logger, Route } from '@dura/service-kit';
import { createAuthenticator, type Authenticator } from './auth/authenticator';
import { requireAllTenants, tenantFilter } from './auth/caller';
import { corsPolicy, type CorsPolicy } from './auth/cors';
import { guardRoutes, type ApiRoute } from './auth/guard';
import { listRuns, parseListQuery } from './list-runs';
import { openApiDocument } from './openapi';
import {
  EVENTS_DEFAULT_LIMIT,
  EVENTS_MAX_LIMIT,
  NotFound,
  BadQuery,
  callsParam,
  intParam,
  parseIntIn,
  runIdParam,
} from './query-params';
import { assertVisible } from './run-access';
import { openRunStream } from './run-stream';
import { createStreamSlots, DEFAULT_STREAM_LIMITS, holdingSlot, type StreamLimits } from './stream-slots';
import { signalRoutes } from './signal-routes';
import { consoleRoutes } from './console-routes';
import { consoleStaticRoutes, DEFAULT_CONSOLE_DIR } from './console-static';
import { submitRoute } from './submit-route';
import { scheduleRoutes } from './schedule-routes';
import { triggerRoutes } from './trigger-routes';
import { catalogueRoutes } from './catalogue-routes';
import { flowLimitRoutes } from './flow-limits-route';
import { chatRoutes, type DoubleTexting } from './chat/chat-routes';
import { causesOf, stateAt } from './time-travel';
import { projectionErrors, runEvents, runs } from './db/schema';
import { RUN_STATE_LISTS, storedStateText } from './stored-state';

export interface ReadApiDeps {
  db: Db;
  /** Stream sequence up to which the read model is complete (`Projector.position`). */
  position: () => number;
  /** For the live stream, and for time travel past the projection's position: the log itself. */
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** For the live stream's wake-ups (default: the connection under `js`). */
  nc?: NatsConnection;
  /** Open live streams allowed per credential and in total (default 20 and 1000); over them: 429. */
  streamLimits?: StreamLimits;
  /** Interval of the live stream's keepalive comment (default 15 s). */
  keepaliveMs?: number;
  log?: Logger;
  /** Who may call (default: no credentials configured, so anyone may, as every tenant). */
  auth?: Authenticator;
  /** Browser origins allowed to call (default: none, CORS off). */
  cors?: CorsPolicy;
  /** What a chat message sent while the chat's turn still runs does (`POST /chat`; default `reject`). */
  chatDoubleTexting?: DoubleTexting;
  /** The web console: where its built files are (default `services/console/dist`), the tracing UI's link. */
  console?: { dir?: string; tracesUrl?: string };
}

/**
 * The projector's API (paths and shapes: docs/reference.md, and `GET /openapi.json`): reads need scope `read`, signals
 * `signal`, cancelling `cancel`, submitting runs and sending events `submit`, managing schedules and triggers
 * `schedule`; a caller of one tenant sees and touches only that tenant's runs (and, in `GET /agents`, only the
 * agents its tenant may start).
 */
export function projectorRoutes(deps: ReadApiDeps): Route[] {
  return guardRoutes(apiRoutes(deps), {
    auth: deps.auth ?? createAuthenticator({}),
    cors: deps.cors ?? corsPolicy(undefined),
    ...(deps.log ? { log: deps.log } : {}),
  });
}

function apiRoutes(deps: ReadApiDeps): ApiRoute[] {
  const { db, position } = deps;
  const unknownRun = (id: string) =>
    new NotFound(
      'run_not_found',
      `no run ${id} in the projection (position ${position()}): check the run id`,
    );
  let openapi: string | undefined;
  const live = {
    db,
    jsm: deps.jsm,
    reader: createRunReader(deps.jsm),
    wakeups: createRunWakeups(deps.nc ?? connectionOf(deps.js)),
    ...(deps.keepaliveMs === undefined ? {} : { keepaliveMs: deps.keepaliveMs }),
    ...(deps.log ? { log: deps.log } : {}),
  };
  const slots = createStreamSlots(deps.streamLimits ?? DEFAULT_STREAM_LIMITS);
  const consoleDeps = {
    db,
    js: deps.js,
    tokens: {
      sources: {
        runs: { reader: live.reader, wakeups: live.wakeups },
        tokens: {
          reader: createRunReader(deps.jsm, RUN_TOKENS),
          wakeups: createRunWakeups(deps.nc ?? connectionOf(deps.js), RUN_TOKENS.subject),
        },
      },
      ...(deps.keepaliveMs === undefined ? {} : { keepaliveMs: deps.keepaliveMs }),
      ...(deps.log ? { log: deps.log } : {}),
    },
    slots,
    ...(deps.console?.tracesUrl === undefined ? {} : { tracesUrl: deps.console.tracesUrl }),
  };
  return [
    {
      method: 'GET',
      path: '/healthz',
      scope: 'public',
      handle: () => Promise.resolve({ status: 200, body: { ok: true, position: position() } }),
    },
    {
      method: 'GET',
      path: '/openapi.json',
      scope: 'public',
      handle: () => {
        openapi ??= JSON.stringify(openApiDocument());
        return Promise.resolve({
          status: 200,
          text: openapi,
          headers: { 'content-type': 'application/json' },
        });
      },
    },
    {
      method: 'GET',
      path: '/runs',
      scope: 'read',
      handle: async ({ query, caller }) => {
        const tenant = tenantFilter(caller);
        const asked = parseListQuery(query);
        // A tenant's caller sees only its own runs: asking for another tenant's finds none.
        if (tenant !== undefined && asked.tenant !== undefined && asked.tenant !== tenant)
          return { status: 200, body: { runs: [] } };
        const q = { ...asked, ...(tenant === undefined ? {} : { tenant }) };
        return { status: 200, body: await listRuns(db, q) };
      },
    },
    {
      method: 'GET',
      path: '/runs/:id',
      scope: 'read',
      async handle({ params, query, caller }) {
        const id = params['id'] ?? '';
        const tenant = tenantFilter(caller);
        const calls = callsParam(query);
        // The state goes out as JSON text the database writes (a long run's is megabytes): not parsed into
        // objects only to be serialized again, as event pages. Without its calls, the database never reads them
        // (most of a long run's state).
        const lists = calls === 'none' ? RUN_STATE_LISTS.filter((list) => list !== 'calls') : RUN_STATE_LISTS;
        const [row] = await db
          .select({ state: storedStateText(lists) })
          .from(runs)
          .where(and(eq(runs.runId, id), tenant === undefined ? undefined : eq(runs.tenant, tenant)));
        if (!row) throw unknownRun(id);
        return { status: 200, text: row.state, headers: { 'content-type': 'application/json' } };
      },
    },
    {
      method: 'GET',
      path: '/runs/:id/events',
      scope: 'read',
      async handle({ params, query, caller }) {
        await assertVisible(db, caller, params['id'] ?? '', () => unknownRun(params['id'] ?? ''));
        const fromSeq = intParam(query, 'fromSeq', 0);
        const limit = intParam(query, 'limit', EVENTS_DEFAULT_LIMIT, {
          min: 1,
          max: EVENTS_MAX_LIMIT,
          clamp: true,
        });
        // Each event goes out as the JSON text the database holds: a page of 1,000 is not parsed into objects
        // only to be serialized again (that was most of the time a long run's page took).
        const rows = await db
          .select({ event: sql<string>`${runEvents.event}::text`, seq: runEvents.seq })
          .from(runEvents)
          .where(and(eq(runEvents.runId, params['id'] ?? ''), gte(runEvents.seq, fromSeq)))
          .orderBy(asc(runEvents.seq))
          .limit(limit + 1);
        const page = rows.slice(0, limit);
        const next = rows.length > limit ? rows[limit]?.seq : undefined;
        return {
          status: 200,
          text: `{"events":[${page.map((r) => r.event).join(',')}]${next === undefined ? '' : `,"nextFromSeq":${next}`}}`,
          headers: { 'content-type': 'application/json' },
        };
      },
    },
    {
      method: 'GET',
      path: '/runs/:id/state',
      scope: 'read',
      async handle({ params, query, caller }) {
        const id = runIdParam(params);
        await assertVisible(db, caller, id, () => unknownRun(id));
        const raw = query.get('at');
        if (raw === null)
          throw new BadQuery(
            'query parameter at is required: the stream sequence to fold up to, e.g. ?at=12',
          );
        const at = parseIntIn(raw, 'query parameter at', { min: 1 });
        return { status: 200, body: { runId: id, at, state: await stateAt(deps, id, at) } };
      },
    },
    {
      method: 'GET',
      path: '/runs/:id/events/:seq/causes',
      scope: 'read',
      async handle({ params, caller }) {
        const id = runIdParam(params);
        await assertVisible(db, caller, id, () => unknownRun(id));
        const seq = parseIntIn(params['seq'] ?? '', 'path parameter seq', { min: 1 });
        return { status: 200, body: { chain: await causesOf(deps, id, seq) } };
      },
    },
    {
      method: 'GET',
      path: '/runs/:id/stream',
      scope: 'read',
      async handle({ params, query, req, caller }) {
        const id = runIdParam(params);
        await assertVisible(db, caller, id, () => unknownRun(id));
        const slot = slots.acquire(caller, req);
        if ('refused' in slot) return slot.refused;
        try {
          return holdingSlot(await openRunStream(live, id, query, req), slot.release);
        } catch (err) {
          slot.release();
          throw err;
        }
      },
    },
    {
      method: 'GET',
      path: '/projection-errors',
      scope: 'read',
      async handle({ query, caller }) {
        // The errors name runs of every tenant and quote their messages: operators only.
        requireAllTenants(caller, 'GET /projection-errors');
        const before = intParam(query, 'beforeSeq', Number.MAX_SAFE_INTEGER);
        const rows = await db
          .select()
          .from(projectionErrors)
          .where(lt(projectionErrors.seq, before))
          .orderBy(desc(projectionErrors.seq))
          .limit(100);
        return { status: 200, body: { errors: rows } };
      },
    },
    submitRoute(deps),
    ...scheduleRoutes(deps),
    ...triggerRoutes(deps),
    ...catalogueRoutes(deps),
    ...flowLimitRoutes(deps),
    ...signalRoutes(deps, unknownRun),
    ...consoleRoutes(consoleDeps, unknownRun),
    ...chatRoutes({
      db,
      js: deps.js,
      stream: consoleDeps.tokens,
      slots,
      ...(deps.chatDoubleTexting ? { doubleTexting: deps.chatDoubleTexting } : {}),
    }),
    ...consoleStaticRoutes(deps.console?.dir ?? DEFAULT_CONSOLE_DIR),
  ];
}
