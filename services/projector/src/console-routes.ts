import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { liveSubject, TokenDeltaSchema, type ConsoleSession } from '@dura/contracts';
import type { Db } from '@dura/db';
import { StreamUnavailable } from '@dura/event-store';
import type { HttpResponse } from '@dura/service-kit';
import { SCOPES, type Caller } from './auth/caller';
import type { ApiRoute } from './auth/guard';
import { forkRoute } from './fork-route';
import { runIdParam } from './query-params';
import { assertVisible } from './run-access';
import { holdingSlot, type StreamSlots } from './stream-slots';

export interface ConsoleRouteDeps {
  db: Db;
  js: JetStreamClient;
  /** For the live tokens; without it `GET /runs/:id/tokens` answers 503. */
  nc: NatsConnection | undefined;
  slots: StreamSlots;
  tracesUrl?: string;
  keepaliveMs?: number;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * The routes the console needs beyond the read API: the caller's session, a run's model tokens as they
 * stream (the core NATS subject `dura.run.<id>.live`, bridged to Server-Sent Events), and forking a run.
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
        const nc = deps.nc;
        if (!nc)
          throw new StreamUnavailable(
            "live tokens need the projector's NATS connection, which this API was built without; pass nc to projectorRoutes",
          );
        const slot = deps.slots.acquire(caller, req);
        if ('refused' in slot) return slot.refused;
        return holdingSlot(liveTokens(nc, deps.keepaliveMs, id), slot.release);
      },
    },
    forkRoute(deps, unknownRun),
  ];
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

/** Each delta on the run's live subject as an SSE `token` event, until the client goes away. */
function liveTokens(nc: NatsConnection, keepaliveMs: number | undefined, runId: string): HttpResponse {
  return {
    status: 200,
    headers: SSE_HEADERS,
    stream: async (res, signal) => {
      const sub = nc.subscribe(liveSubject(runId));
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), keepaliveMs ?? 15_000);
      const stop = (): void => sub.unsubscribe();
      signal.addEventListener('abort', stop, { once: true });
      if (signal.aborted) stop();
      res.write(': live tokens\n\n');
      try {
        for await (const msg of sub) {
          // Deltas are ephemeral and never needed to rebuild state: a malformed one is dropped, not relayed.
          const delta = TokenDeltaSchema.safeParse(safeJson(msg.string()));
          if (delta.success) res.write(`event: token\ndata: ${JSON.stringify(delta.data)}\n\n`);
        }
      } finally {
        clearInterval(keepalive);
        signal.removeEventListener('abort', stop);
      }
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
