// What a web page can send a Dura HTTP server is refused before any route runs: a POST that is not JSON (a
// "simple" cross-origin request needs no preflight), and on loopback a foreign Host (DNS rebinding) or Origin.
// Real requests through node:http, which (unlike fetch) lets a test set Host.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpServerHandle, type Route } from '../src/index';
import { recordingLogger } from './infra';

const { log } = recordingLogger();
const servers: HttpServerHandle[] = [];
let loopback: HttpServerHandle;
let trusting: HttpServerHandle;
let everywhere: HttpServerHandle;
let handled = 0;

const routes: Route[] = [
  { method: 'GET', path: '/runs', handle: () => Promise.resolve({ status: 200, body: { runs: [] } }) },
  {
    method: 'POST',
    path: '/runs',
    handle: () => {
      handled += 1;
      return Promise.resolve({ status: 202, body: { accepted: true } });
    },
  },
];

beforeAll(async () => {
  loopback = await startHttpServer({ port: 0, host: '127.0.0.1', routes, log });
  trusting = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    routes,
    log,
    trustedOrigins: new Set(['https://ops.example.com']),
  });
  everywhere = await startHttpServer({ port: 0, host: '0.0.0.0', routes, log });
  servers.push(loopback, trusting, everywhere);
});
afterAll(async () => {
  await Promise.allSettled(servers.map((server) => server.close()));
});

interface Sent {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request to 127.0.0.1:<port> with exactly these headers (Host defaults to the server's own address). */
function send(server: HttpServerHandle, sent: Sent): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: '/runs',
        method: sent.method ?? 'GET',
        headers: { host: `127.0.0.1:${server.port}`, ...sent.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
          }),
        );
      },
    );
    req.once('error', reject);
    req.end(sent.body);
  });
}

const post = (headers: Record<string, string>, body = '{"agent":{"kind":"scripted","steps":[]}}') => ({
  method: 'POST',
  headers,
  body,
});

describe('a POST must be JSON', () => {
  it.each([
    ['text/plain (a form or fetch a page may send without asking)', { 'content-type': 'text/plain' }],
    ['a form encoding', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['no Content-Type at all', {}],
  ])('%s: 415, and the route never runs', async (_, headers: Record<string, string>) => {
    const before = handled;
    for (const server of [loopback, everywhere]) {
      const answer = await send(server, post(headers));
      expect(answer.status).toBe(415);
      expect(answer.body).toMatchObject({
        error: {
          code: 'unsupported_media_type',
          message: expect.stringMatching(/Content-Type: application\/json/),
        },
      });
    }
    expect(handled).toBe(before);
  });

  it('application/json, with or without a charset, reaches the route', async () => {
    const before = handled;
    expect((await send(loopback, post({ 'content-type': 'application/json' }))).status).toBe(202);
    expect((await send(loopback, post({ 'content-type': 'Application/JSON; charset=utf-8' }))).status).toBe(
      202,
    );
    expect(handled).toBe(before + 2);
  });
});

describe('a loopback-bound server answers only its own address and pages', () => {
  const json = { 'content-type': 'application/json' };

  it('a Host of another name (DNS rebinding) is 403, for reads and writes alike', async () => {
    const before = handled;
    for (const sent of [
      { headers: { host: 'evil.example' } },
      post({ ...json, host: `evil.example:${loopback.port}` }),
    ]) {
      const answer = await send(loopback, sent);
      expect(answer).toMatchObject({
        status: 403,
        body: { error: { code: 'host_forbidden', message: expect.stringContaining('evil.example') } },
      });
    }
    expect(handled).toBe(before);
  });

  it('an Origin of another site is 403; its own origins and the trusted ones pass', async () => {
    const before = handled;
    const foreign = await send(loopback, post({ ...json, origin: 'https://evil.example' }));
    expect(foreign).toMatchObject({ status: 403, body: { error: { code: 'origin_forbidden' } } });
    expect((await send(loopback, post({ ...json, origin: 'null' }))).status).toBe(403);
    expect(handled).toBe(before);
    for (const name of ['127.0.0.1', 'localhost', '[::1]']) {
      const own = { host: `${name}:${loopback.port}`, origin: `http://${name}:${loopback.port}` };
      expect((await send(loopback, post({ ...json, ...own }))).status).toBe(202);
    }
    expect((await send(trusting, post({ ...json, origin: 'https://ops.example.com' }))).status).toBe(202);
    expect((await send(trusting, post({ ...json, origin: 'https://evil.example' }))).status).toBe(403);
    expect(handled).toBe(before + 4);
  });

  it('a server bound to every interface is reached under other names: it does not check Host', async () => {
    expect((await send(everywhere, { headers: { host: 'dura.internal.example' } })).status).toBe(200);
  });
});
