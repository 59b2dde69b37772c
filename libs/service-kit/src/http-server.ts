import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DuraError } from '@dura/contracts';
import type { Logger } from './logger';
import { isLoopbackHost, loopbackRefusal } from './loopback-guard';

export type HttpResponse =
  | { status: number; body: unknown; headers?: Record<string, string> }
  /** Sent as is (e.g. the Prometheus text format); set its content type in `headers`. */
  | { status: number; text: string; headers?: Record<string, string> }
  /**
   * A long-lived response written piece by piece (e.g. Server-Sent Events). The server sends `status` and
   * `headers` at once (set the content type there), then hands the raw response to `stream`, and ends it when
   * the returned promise settles. `signal` aborts when the client goes away or the server closes: stop then.
   * Errors must be decided before returning this (status and headers are already sent when `stream` runs).
   */
  | {
      status: number;
      headers?: Record<string, string>;
      stream(res: ServerResponse, signal: AbortSignal): Promise<void>;
    };

export interface Route {
  method: 'GET' | 'POST' | 'DELETE' | 'OPTIONS';
  /** Path with `:name` parameters, e.g. `/runs/:id/events`. */
  path: string;
  handle(request: {
    params: Record<string, string>;
    query: URLSearchParams;
    req: IncomingMessage;
  }): Promise<HttpResponse>;
}

export interface HttpServerHandle {
  readonly port: number;
  /** The address the server is bound to, as the socket reports it: `127.0.0.1:8080`, `0.0.0.0:8080`, `[::]:8080`. */
  readonly address: string;
  /** A URL this machine can reach the server on (loopback when bound to every interface). */
  readonly url: string;
  /** Serves `routes` from now on instead of the ones it started with (a service that listens while it starts). */
  setRoutes(routes: Route[]): void;
  close(): Promise<void>;
}

/** Where HTTP servers listen unless told otherwise: this machine only. Containers pass `0.0.0.0` explicitly. */
export const DEFAULT_BIND_HOST = '127.0.0.1';

const bracketed = (host: string): string => (host.includes(':') ? `[${host}]` : host);

/** A host to connect to for a server bound to `bound`: a wildcard address is reachable on loopback. */
function reachableHost(bound: string): string {
  if (bound === '0.0.0.0') return '127.0.0.1';
  if (bound === '::') return '::1';
  return bound;
}

/**
 * A JSON HTTP server with a tiny router. Errors become JSON `{error: {code, message}}`, never a crashed process.
 * It listens on `host` (default 127.0.0.1: reachable from this machine only). What a web page could send it is
 * refused before any route runs: a POST whose body is not `application/json` (415: only JSON makes a browser
 * ask the server first), and on a loopback address a foreign `Host` or `Origin` (403: DNS rebinding, a page
 * of another site).
 */
export async function startHttpServer(options: {
  port: number;
  host?: string | undefined;
  routes: Route[];
  log: Logger;
  /** Browser origins a loopback-bound server answers besides its own (the API's CORS list). */
  trustedOrigins?: ReadonlySet<string>;
}): Promise<HttpServerHandle> {
  const compileAll = (routes: Route[]) => routes.map((route) => ({ route, ...compile(route.path) }));
  let compiled = compileAll(options.routes);
  const host = options.host ?? DEFAULT_BIND_HOST;
  const loopback = isLoopbackHost(host);
  const server: Server = createServer((req, res) => {
    const send = (response: HttpResponse): void => {
      if ('stream' in response) {
        const gone = new AbortController();
        res.once('close', () => gone.abort());
        res.writeHead(response.status, response.headers);
        res.flushHeaders();
        response
          .stream(res, gone.signal)
          .catch((err: unknown) => options.log.error('http stream failed', { path: req.url, err }))
          .finally(() => res.end());
        return;
      }
      if ('text' in response) {
        res.writeHead(response.status, { 'content-type': 'text/plain; charset=utf-8', ...response.headers });
        res.end(response.text);
        return;
      }
      res.writeHead(response.status, { 'content-type': 'application/json', ...response.headers });
      res.end(JSON.stringify(response.body));
    };
    if (loopback) {
      const { port } = server.address() as AddressInfo;
      const refused = loopbackRefusal(port, req.headers, options.trustedOrigins);
      if (refused) {
        send({ status: 403, body: { error: refused } });
        return;
      }
    }
    let url: URL;
    let route: Route;
    let params: Record<string, string>;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
      const match = compiled
        .map((c) => ({ c, m: c.regex.exec(url.pathname) }))
        .find(({ c, m }) => m !== null && c.route.method === req.method);
      if (!match?.m) {
        send({
          status: 404,
          body: { error: { code: 'not_found', message: `no route for ${req.method} ${url.pathname}` } },
        });
        return;
      }
      route = match.c.route;
      params = Object.fromEntries(
        match.c.names.map((name, i) => [name, decodeURIComponent(match.m?.[i + 1] ?? '')]),
      );
    } catch (err) {
      // A throw in this listener is an uncaught exception: one bad request line would kill the service.
      send({
        status: 400,
        body: {
          error: { code: 'bad_request', message: `malformed request target: ${(err as Error).message}` },
        },
      });
      return;
    }
    if (req.method === 'POST' && !isJson(req.headers['content-type'])) {
      send(notJson(req.headers['content-type']));
      return;
    }
    // Through a promise, so a handler that throws synchronously is answered like one that rejects.
    Promise.resolve()
      .then(() => route.handle({ params, query: url.searchParams, req }))
      .then(send)
      .catch((err: unknown) => {
        const known = err instanceof DuraError;
        if (!known) options.log.error('http handler failed', { path: url.pathname, err });
        send({
          status: known ? httpStatusOf(err) : 500,
          body: {
            error: known
              ? { code: err.code, message: err.message }
              : { code: 'internal', message: 'internal error' },
          },
        });
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const port = bound.port;
  return {
    port,
    address: `${bracketed(bound.address)}:${port}`,
    url: `http://${bracketed(reachableHost(bound.address))}:${port}`,
    setRoutes(routes) {
      compiled = compileAll(routes);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The code of a DuraError a handler throws for a request body over its limit: answered 413, not 400. */
export const BODY_TOO_LARGE = 'body_too_large';

/** Codes of a valid request that the target's state refuses (a run that ended, a run id in use): 409. */
export const CONFLICT_CODES: ReadonlySet<string> = new Set(['run_ended', 'run_id_conflict']);

/** 404 for `*_not_found`, 409 for `CONFLICT_CODES`, 413 for an oversized body, 400 for any other terminal error, 500 for a retryable one. */
export function httpStatusOf(err: DuraError): number {
  if (err.code.endsWith('not_found')) return 404;
  if (CONFLICT_CODES.has(err.code)) return 409;
  if (err.code === BODY_TOO_LARGE) return 413;
  return err.retryable ? 500 : 400;
}

/** True for `application/json`, with or without parameters (`; charset=utf-8`). */
function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

function notJson(contentType: string | undefined): HttpResponse {
  const sent = contentType === undefined ? 'no Content-Type' : `Content-Type "${contentType}"`;
  const message = `a POST takes a JSON body: send "Content-Type: application/json" (this request had ${sent})`;
  return { status: 415, body: { error: { code: 'unsupported_media_type', message } } };
}

function compile(path: string): { regex: RegExp; names: string[] } {
  const names: string[] = [];
  const pattern = path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { regex: new RegExp(`^${pattern}/?$`), names };
}
