import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpRequestTool, parseAllowList, ToolError } from '../src/index';

// The test server listens on loopback, which the egress policy refuses unless an entry names it.
const httpRequestTool = createHttpRequestTool({
  policy: { entries: parseAllowList('127.0.0.0/8').entries, maxRedirects: 0, maxResponseBytes: 1_048_576 },
});

const seen: { method?: string; url?: string; headers: IncomingHttpHeaders; body: string }[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (req.url === '/json') {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, echo: body ? (JSON.parse(body) as unknown) : null }));
      } else if (req.url === '/busy') {
        res.writeHead(503, { 'retry-after': '2' });
        res.end('try later');
      } else if (req.url === '/missing') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('no such thing');
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('hello');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const ctx = (key: string) => ({
  idempotencyKey: key,
  runId: 'run-1',
  callId: 'call-1',
  attempt: 1,
  signal: new AbortController().signal,
});

describe('http.request', () => {
  it('sends the call idempotency key and a JSON body, and returns status and parsed JSON', async () => {
    const args = httpRequestTool.input.parse({ url: `${base}/json`, method: 'POST', body: { amount: 5 } });
    const result = await httpRequestTool.execute(args, ctx('run-1:1:http.request:abc'));
    expect(result).toEqual({ status: 201, body: { ok: true, echo: { amount: 5 } } });
    const request = seen.at(-1);
    expect(request?.headers['idempotency-key']).toBe('run-1:1:http.request:abc');
    expect(request?.headers['content-type']).toBe('application/json');
  });

  it('does not let caller headers override the idempotency key', async () => {
    const args = httpRequestTool.input.parse({ url: `${base}/`, headers: { 'Idempotency-Key': 'forged' } });
    await httpRequestTool.execute(args, ctx('real-key'));
    expect(seen.at(-1)?.headers['idempotency-key']).toBe('real-key');
  });

  it('returns 4xx responses as results the model can read', async () => {
    const args = httpRequestTool.input.parse({ url: `${base}/missing` });
    expect(await httpRequestTool.execute(args, ctx('k'))).toEqual({ status: 404, body: 'no such thing' });
  });

  it('turns 5xx into a retryable ToolError honouring Retry-After', async () => {
    const args = httpRequestTool.input.parse({ url: `${base}/busy` });
    const error = await httpRequestTool.execute(args, ctx('k')).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ToolError);
    expect(error).toMatchObject({ code: 'http_status', retryable: true, retryAfterMs: 2000 });
  });

  it('turns an unreachable host into a retryable ToolError', async () => {
    const args = httpRequestTool.input.parse({ url: 'http://127.0.0.1:1/', timeoutMs: 2000 });
    const error = await httpRequestTool.execute(args, ctx('k')).catch((err: unknown) => err);
    expect(error).toMatchObject({ code: 'http_unreachable', retryable: true });
  });
});
