import { readinessRoute, type Route } from '@dura/service-kit';

const STARTING_RETRY_AFTER_S = '5';

/**
 * What the API port serves while the projector starts (waiting for Postgres or NATS, migrating, binding its
 * consumer): `/healthz` alive, `/readyz` 503 with what it waits for, every other path 503 `starting` with
 * Retry-After, so a client or probe can tell "not yet" from "no such route".
 */
export function startingRoutes(reason: () => string): Route[] {
  const notYet = () =>
    Promise.resolve({
      status: 503,
      headers: { 'retry-after': STARTING_RETRY_AFTER_S },
      body: { error: { code: 'starting', message: `the projector is starting: ${reason()}; retry shortly` } },
    });
  const anyPath = ['/:a', '/:a/:b', '/:a/:b/:c', '/:a/:b/:c/:d'].flatMap((path) =>
    (['GET', 'POST', 'DELETE'] as const).map((method): Route => ({ method, path, handle: notYet })),
  );
  return [
    { method: 'GET', path: '/healthz', handle: () => Promise.resolve({ status: 200, body: { ok: true } }) },
    readinessRoute(() => Promise.resolve(reason())),
    ...anyPath,
  ];
}
