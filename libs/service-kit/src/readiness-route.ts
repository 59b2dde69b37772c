import type { Route } from './http-server';

/** `GET /readyz`: 200 while `check` resolves to undefined, 503 with its reason (or the error's message) otherwise. */
export function readinessRoute(check: () => Promise<string | undefined>): Route {
  return {
    method: 'GET',
    path: '/readyz',
    handle: async () => {
      const reason = await check().catch((err: unknown) =>
        err instanceof Error ? err.message : String(err),
      );
      return reason === undefined
        ? { status: 200, body: { ready: true } }
        : { status: 503, body: { ready: false, reason } };
    },
  };
}
