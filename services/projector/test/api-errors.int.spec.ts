import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiErrorSchema } from '@dura/contracts';
import { createLogger } from '@dura/service-kit';
import { RunScript } from './support';
import { useProjectorApi } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

/** Every line the API logs, to prove a client's mistake is not logged as a server error. */
const lines: string[] = [];

const log = createLogger({ service: 'projector', level: 'debug', write: (line) => lines.push(line) });
const api = useProjectorApi(() => ({}), { log });

beforeAll(async () => {
  await api().project([RunScript.complete('run-01', 1), RunScript.complete('run-02', 2)]);
});

async function send(path: string, init: RequestInit = {}) {
  const response = await fetch(`${api().http.url}${path}`, init);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}

function errorLines(): string[] {
  return lines.filter((line) => (JSON.parse(line) as { level: string }).level === 'error');
}

function cursor(json: unknown): string {
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

describe('the read API answers a client mistake with 400 and a JSON error, never a 500 or an error log', () => {
  it.each([
    'createdAfter=2025-02-30',
    'createdAfter=2025-04-31T10:00:00Z',
    'createdBefore=2023-02-29',
    'createdAfter=0000-01-01',
    'createdAfter=2025-01-01T24:00:00Z',
    'createdAfter=2025-01-01T10:60:00Z',
    'createdBefore=2025-01-01T10:00:00+24:00',
  ])('?%s (an impossible date or time)', async (query) => {
    const answer = await send(`/runs?${query}`);
    expect(answer.status).toBe(400);
    const { error } = ApiErrorSchema.parse(answer.body);
    expect(error).toMatchObject({ code: 'bad_query' });
    expect(error.message).toMatch(
      /must be an ISO 8601 date or date-time with a zone, on a real calendar day/,
    );
    expect(errorLines()).toEqual([]);
  });

  it('still accepts real dates, leap days included', async () => {
    for (const query of ['createdAfter=2024-02-29', 'createdBefore=2000-02-29T23:59:59.999+05:30'])
      expect((await send(`/runs?${query.replace('+', '%2B')}`)).status, query).toBe(200);
  });

  it.each([
    ['a number-like string', '1'],
    ['a word Date.parse reads as a date', 'hello 5'],
    ['an impossible date', '2025-02-30T00:00:00+00:00'],
    ['an empty string', ''],
  ])('a cursor whose key is %s', async (_, key) => {
    const answer = await send(`/runs?cursor=${cursor({ s: 'updated_desc', k: key, id: 'run-01' })}`);
    expect(answer.status).toBe(400);
    expect(ApiErrorSchema.parse(answer.body).error).toMatchObject({
      code: 'bad_cursor',
      message: expect.stringMatching(/is not a cursor this API issued/),
    });
    expect(errorLines()).toEqual([]);
  });
});

describe('a request body over the limit (64 KiB)', () => {
  const big = JSON.stringify({ name: 'approve', payload: { blob: 'x'.repeat(70 * 1024) } });

  it('is answered 413 body_too_large, with a Content-Length', async () => {
    const answer = await send('/runs/run-01/signals', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(answer.status).toBe(413);
    expect(ApiErrorSchema.parse(answer.body).error).toMatchObject({
      code: 'body_too_large',
      message: expect.stringMatching(/exceeds 65536 bytes/),
    });
  });

  it('is answered 413 when sent chunked, without a length', async () => {
    const bytes = new TextEncoder().encode(big);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 8192) controller.enqueue(bytes.slice(at, at + 8192));
        controller.close();
      },
    });
    const answer = await send('/runs/run-01/cancel', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    });
    expect(answer.status).toBe(413);
    expect(ApiErrorSchema.parse(answer.body).error.code).toBe('body_too_large');
    expect(errorLines()).toEqual([]);
  });
});
