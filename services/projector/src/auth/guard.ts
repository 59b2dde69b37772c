import type { IncomingMessage } from 'node:http';
import { DuraError } from '@dura/contracts';
import { httpStatusOf, type HttpResponse, type Logger, type Route } from '@dura/service-kit';
import { AuthError, requireScope, type Caller, type Scope } from './caller';
import type { Authenticator } from './authenticator';
import { corsHeaders, preflightHeaders, type CorsPolicy } from './cors';

/** A route of the projector's API with what it takes to call it. */
export interface ApiRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** The scope a caller needs; `public` routes (health, the API document) take no credential. */
  scope: Scope | 'public';
  handle(request: {
    params: Record<string, string>;
    query: URLSearchParams;
    req: IncomingMessage;
    caller: Caller;
  }): Promise<HttpResponse>;
}

export interface GuardOptions {
  auth: Authenticator;
  cors: CorsPolicy;
  log?: Logger;
}

/**
 * The routes as the HTTP server serves them: each authenticates the caller, checks the route's scope, and
 * answers every outcome (errors included) with the CORS headers the request's origin may see. With CORS on,
 * each path also answers preflights.
 */
export function guardRoutes(routes: readonly ApiRoute[], options: GuardOptions): Route[] {
  const guarded: Route[] = routes.map((route) => ({
    method: route.method,
    path: route.path,
    async handle({ params, query, req }) {
      const cors = corsHeaders(options.cors, req.headers.origin);
      let response: HttpResponse;
      try {
        const caller =
          route.scope === 'public' ? undefined : await options.auth.authenticate(req.headers.authorization);
        if (caller && route.scope !== 'public')
          requireScope(caller, route.scope, `${route.method} ${route.path}`);
        response = await route.handle({ params, query, req, caller: caller ?? anonymous });
      } catch (err) {
        response = errorResponse(err, req, options.log);
      }
      return { ...response, headers: { ...response.headers, ...cors } };
    },
  }));
  if (options.cors.origins.size === 0) return guarded;
  const paths = [...new Set(routes.map((route) => route.path))];
  return [
    ...guarded,
    ...paths.map((path): Route => ({
      method: 'OPTIONS',
      path,
      handle: ({ req }) =>
        Promise.resolve({
          status: 204,
          text: '',
          headers: preflightHeaders(options.cors, req.headers.origin),
        }),
    })),
  ];
}

/** Never used to authorize anything: public routes take no caller. */
const anonymous: Caller = { name: 'public', tenant: '', scopes: new Set(), kind: 'open' };

/** The answer for a failed request, as the HTTP server would give it, plus 401/403/503 for auth. */
function errorResponse(err: unknown, req: IncomingMessage, log: Logger | undefined): HttpResponse {
  if (err instanceof AuthError) {
    if (err.status !== 503)
      log?.info('api request refused', { path: req.url, code: err.code, status: err.status });
    return {
      status: err.status,
      body: { error: { code: err.code, message: err.message } },
      ...(err.challenge ? { headers: { 'www-authenticate': err.challenge } } : {}),
    };
  }
  if (err instanceof DuraError)
    return {
      status: httpStatusOf(err),
      body: { error: { code: err.code, message: err.message } },
    };
  log?.error('http handler failed', { path: req.url, err });
  return { status: 500, body: { error: { code: 'internal', message: 'internal error' } } };
}
