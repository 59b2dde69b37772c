import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  EventPageResponseSchema,
  RunListResponseSchema,
  RunStateSchema,
  RunStateSummarySchema,
  type RunEvent,
} from '@dura/contracts';
import { openApiDocument } from '../src/index';
import { RunScript, asJson, foldLog, streamMessages } from './support';
import { useProjectorApi } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const scripts = [RunScript.complete('run-api', 4), new RunScript('run-api-pending').request()];
const api = useProjectorApi();

beforeAll(async () => {
  await api().project(scripts);
});

/** The loose shape of every JSON body this API answers with. */
interface Body {
  events: RunEvent[];
  nextFromSeq?: number;
  runs: { runId: string; status: string; steps: number }[];
  error: { code: string; message: string };
  [field: string]: unknown;
}

async function get(path: string): Promise<{ status: number; type: string | null; body: Body }> {
  const response = await fetch(`${api().http.url}${path}`);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: (await response.json()) as Body,
  };
}

describe('the projector HTTP API', () => {
  it('serves a run state equal to the fold of its log', async () => {
    const { status, body } = await get('/runs/run-api');
    expect(status).toBe(200);
    expect(body).toEqual(asJson(foldLog(await streamMessages(api().setup)).get('run-api')));
    expect(body).toMatchObject({ runId: 'run-api', status: 'completed', steps: 4, output: { calls: 4 } });
  });

  it('serves the state without its calls for ?calls=none, and the full state for ?calls=all', async () => {
    const full = asJson(foldLog(await streamMessages(api().setup)).get('run-api')!);
    const { calls, ...rest } = full;
    expect(calls).toHaveLength(4);
    const summary = await get('/runs/run-api?calls=none');
    expect(summary).toMatchObject({ status: 200, type: 'application/json' });
    expect(summary.body).toEqual(rest);
    expect(RunStateSummarySchema.parse(summary.body)).toMatchObject({ status: 'completed', steps: 4 });
    expect((await get('/runs/run-api?calls=all')).body).toEqual(full);
  });

  it.each(['calls=some', 'calls=', 'calls=NONE'])(
    'answers 400 naming what it got for /runs/:id?%s',
    async (query) => {
      const response = await get(`/runs/run-api?${query}`);
      expect(response).toMatchObject({ status: 400, type: 'application/json' });
      expect(response.body.error).toEqual({
        code: 'bad_query',
        message: `query parameter calls must be "all" (the full state) or "none" (the state without its calls), got "${query.slice('calls='.length)}"`,
      });
    },
  );

  it('pages through events with nextFromSeq until the last page', async () => {
    const logged = await api().setup.store.read('run-api');
    const pages: RunEvent[][] = [];
    let next: number | undefined = 0;
    while (next !== undefined) {
      const { status, body } = await get(`/runs/run-api/events?fromSeq=${next}&limit=5`);
      expect(status).toBe(200);
      pages.push(body.events);
      const following = logged[pages.flat().length];
      expect(body.nextFromSeq).toBe(following?.seq);
      next = body.nextFromSeq;
    }
    expect(pages.map((page) => page.length)).toEqual([5, 5, 5, logged.length - 15]);
    expect(pages.flat()).toEqual(asJson(logged));
  });

  it('starts a page at fromSeq, skipping other runs sharing the stream', async () => {
    const logged = await api().setup.store.read('run-api');
    const from = logged[3]!.seq;
    const { body } = await get(`/runs/run-api/events?fromSeq=${from}&limit=2`);
    expect(body.events.map((e) => e.seq)).toEqual([logged[3]!.seq, logged[4]!.seq]);
    expect(body.nextFromSeq).toBe(logged[5]!.seq);
  });

  it('answers 404 with a JSON error for a run it does not know', async () => {
    const response = await get('/runs/no-such-run');
    expect(response).toMatchObject({ status: 404, type: 'application/json' });
    expect(response.body).toEqual({
      error: { code: 'run_not_found', message: expect.stringContaining('no-such-run') },
    });
  });

  it.each(['limit=abc', 'limit=-1', 'limit=0', 'limit=1.5', 'fromSeq=x'])(
    'answers 400 with a JSON error for ?%s',
    async (query) => {
      const response = await get(`/runs/run-api/events?${query}`);
      expect(response).toMatchObject({ status: 400, type: 'application/json' });
      expect(response.body.error).toMatchObject({
        code: 'bad_query',
        message: expect.stringMatching(/must be an integer >= [01]/),
      });
    },
  );

  it('lists runs, filtered by status, and rejects a bad list limit', async () => {
    const all = await get('/runs');
    expect(all.status).toBe(200);
    expect((all.body.runs as { runId: string }[]).map((r) => r.runId).sort()).toEqual([
      'run-api',
      'run-api-pending',
    ]);
    const pending = await get('/runs?status=pending');
    expect(pending.body.runs).toEqual([
      expect.objectContaining({ runId: 'run-api-pending', status: 'pending', steps: 0 }),
    ]);
    expect((await get('/runs?limit=nope')).status).toBe(400);
  });

  it('serves its OpenAPI document, and answers in the shapes it documents', async () => {
    const doc = await get('/openapi.json');
    expect(doc).toMatchObject({ status: 200, type: 'application/json' });
    expect(doc.body).toEqual(openApiDocument());
    expect(RunListResponseSchema.safeParse((await get('/runs')).body).success).toBe(true);
    expect(EventPageResponseSchema.safeParse((await get('/runs/run-api/events?limit=3')).body).success).toBe(
      true,
    );
    expect(RunStateSchema.parse((await get('/runs/run-api')).body)).toMatchObject({ status: 'completed' });
  });

  it('reports health with its position, and 404 JSON for unknown routes', async () => {
    expect(await get('/healthz')).toMatchObject({
      status: 200,
      body: { ok: true, position: api().projector.position() },
    });
    const missing = await get('/nowhere');
    expect(missing).toMatchObject({
      status: 404,
      type: 'application/json',
      body: { error: { code: 'not_found' } },
    });
  });
});
