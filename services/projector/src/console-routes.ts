import type { JetStreamClient } from '@nats-io/jetstream';
import type { ConsoleSession } from '@dura/contracts';
import type { Db } from '@dura/db';
import { SCOPES, type Caller } from './auth/caller';
import type { ApiRoute } from './auth/guard';
import { forkRoute } from './fork-route';
import { runIdParam } from './query-params';
import { assertVisible } from './run-access';
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
