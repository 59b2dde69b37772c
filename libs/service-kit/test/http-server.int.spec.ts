import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractViolation, DuraError } from '@dura/contracts';
import { startHttpServer, type HttpServerHandle, type Route } from '../src/index';
import { recordingLogger } from './infra';

const { log, records } = recordingLogger();
let server: HttpServerHandle | undefined;
let streamsAborted = 0;

function failure(kind: string | undefined): Error {
  if (kind === 'missing') return new DuraError('run_not_found', 'no run "r-404"');
  if (kind === 'invalid') return new ContractViolation('limit must be a number', ['limit: expected number']);
  if (kind === 'busy') return new DuraError('db_unavailable', 'database is restarting', { retryable: true });
  return new Error('connect ECONNREFUSED postgres://admin:hunter2@db');
}

const routes: Route[] = [
  {
    method: 'GET',
    path: '/runs/:id',
    handle: ({ params, query }) =>
      Promise.resolve({ status: 200, body: { id: params.id, view: query.get('view') } }),
  },
  {
    method: 'GET',
    path: '/runs/:id/events/:seq',
    handle: ({ params }) =>
      Promise.resolve({ status: 200, body: params, headers: { 'x-dura-seq': params.seq ?? '' } }),
  },
  {
    method: 'POST',
    path: '/runs/:id/signals',
    handle: () => Promise.resolve({ status: 202, body: { accepted: true } }),
  },
  {
    method: 'GET',
    path: '/fail/:kind',
    handle: ({ params }) => Promise.reject(failure(params.kind)),
  },
  {
    method: 'GET',
    path: '/count/:n',
    handle: ({ params }) =>
      Promise.resolve({
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        async stream(res, signal) {
          for (let i = 1; i <= Number(params.n); i += 1) res.write(`data: ${i}\n\n`);
          if (params.n !== '0') return;
          // n = 0: write until the client goes away, then report that the signal fired.
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
          streamsAborted += 1;
        },
      }),
  },
  {
    method: 'GET',
    path: '/sync-throw',
    handle: () => {
      throw new Error('thrown before any promise, secret=hunter2');
    },
  },
];

async function call(path: string, method = 'GET') {
  const json = method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {};
  const response = await fetch(`${server!.url}${path}`, { method, ...json });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    headers: response.headers,
    body: await response.json(),
  };
}

/** Sends a raw request line, as fetch() would never let us, and returns the response's status line. */
function rawStatusLine(requestLine: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(server!.port, '127.0.0.1', () =>
      socket.write(`${requestLine}\r\nHost: 127.0.0.1:${server!.port}\r\n\r\n`),
    );
    socket.once('data', (chunk) => {
      resolve(String(chunk).split('\r\n')[0] ?? '');
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

beforeAll(async () => {
  server = await startHttpServer({ port: 0, host: '127.0.0.1', routes, log });
});
afterAll(async () => {
  await server?.close();
});

describe('startHttpServer routing', () => {
  it('listens on a free port when asked for port 0', () => {
    expect(server!.port).toBeGreaterThan(0);
    expect(server!.url).toBe(`http://127.0.0.1:${server!.port}`);
  });

  it('matches routes with parameters, decodes them, passes the query and sets JSON content type', async () => {
    expect(await call('/runs/run-1?view=full')).toMatchObject({
      status: 200,
      type: 'application/json',
      body: { id: 'run-1', view: 'full' },
    });
    expect((await call('/runs/a%20b/')).body).toEqual({ id: 'a b', view: null });
    const events = await call('/runs/run-1/events/42');
    expect(events.body).toEqual({ id: 'run-1', seq: '42' });
    expect(events.headers.get('x-dura-seq')).toBe('42');
    expect(await call('/runs/run-1/signals', 'POST')).toMatchObject({
      status: 202,
      body: { accepted: true },
    });
  });

  it.each([
    ['an unknown path', '/nope', 'GET'],
    ['a path with an extra segment', '/runs/run-1/extra', 'GET'],
    ['a known path with another method', '/runs/run-1', 'POST'],
  ])('answers %s with a 404 JSON error', async (_, path, method) => {
    expect(await call(path, method)).toMatchObject({
      status: 404,
      type: 'application/json',
      body: { error: { code: 'not_found', message: `no route for ${method} ${path}` } },
    });
  });

  it('answers a malformed percent-encoding in a parameter with 400, and keeps serving', async () => {
    expect(await call('/runs/%E0%A4')).toMatchObject({
      status: 400,
      body: { error: { code: 'bad_request' } },
    });
    expect((await call('/runs/ok')).status).toBe(200);
  });

  it('answers a request target the URL parser refuses with 400, and keeps serving', async () => {
    expect(await rawStatusLine('GET http://[broken/runs/x HTTP/1.1')).toBe('HTTP/1.1 400 Bad Request');
    expect((await call('/runs/ok')).status).toBe(200);
  });
});

describe('startHttpServer errors', () => {
  it('answers a DuraError with a 4xx carrying its code and message', async () => {
    expect(await call('/fail/missing')).toEqual(
      expect.objectContaining({
        status: 404,
        body: { error: { code: 'run_not_found', message: 'no run "r-404"' } },
      }),
    );
    expect(await call('/fail/invalid')).toEqual(
      expect.objectContaining({
        status: 400,
        body: { error: { code: 'contract_violation', message: 'limit must be a number' } },
      }),
    );
  });

  it('answers a retryable DuraError with a 5xx that keeps its code', async () => {
    const { status, body } = await call('/fail/busy');
    expect(status).toBeGreaterThanOrEqual(500);
    expect(body).toEqual({ error: { code: 'db_unavailable', message: 'database is restarting' } });
  });

  it.each([['/fail/unexpected'], ['/sync-throw']])(
    'answers an unexpected error in %s with a 500 that does not leak its message, and logs it without its secrets',
    async (path) => {
      const response = await call(path);
      expect(response).toMatchObject({
        status: 500,
        body: { error: { code: 'internal', message: 'internal error' } },
      });
      expect(JSON.stringify(response.body)).not.toContain('hunter2');
      expect(records.at(-1)).toMatchObject({ level: 'error', msg: 'http handler failed', path });
      // Logged for the operator, with the connection string's password redacted there too.
      expect(JSON.stringify(records.at(-1))).toContain('[Redacted]');
      expect(JSON.stringify(records.at(-1))).not.toContain('hunter2');
      expect((await call('/runs/still-up')).status).toBe(200);
    },
  );
});

describe('startHttpServer streams', () => {
  it('sends status and headers at once, then what the stream writes, and ends when it returns', async () => {
    const response = await fetch(`${server!.url}/count/3`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toBe('data: 1\n\ndata: 2\n\ndata: 3\n\n');
  });

  it('aborts the stream signal when the client goes away', async () => {
    const client = new AbortController();
    const response = await fetch(`${server!.url}/count/0`, { signal: client.signal });
    expect(response.status).toBe(200);
    client.abort();
    await expect.poll(() => streamsAborted).toBe(1);
    expect((await call('/runs/still-up')).status).toBe(200);
  });
});

describe('HttpServerHandle.close', () => {
  it('stops accepting connections', async () => {
    const own = await startHttpServer({ port: 0, host: '127.0.0.1', routes, log });
    await own.close();
    await expect(fetch(`${own.url}/runs/x`)).rejects.toThrow();
  });
});
