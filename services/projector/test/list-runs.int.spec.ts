import { beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'drizzle-orm';
import { ApiErrorSchema, RunListResponseSchema, type RunSummary } from '@dura/contracts';
import { rowsOf } from '@dura/db';
import { listRunsSql, parseListQuery } from '../src/list-runs';
import { agentLabel, summarize } from '../src/index';
import { RunScript, foldLog, streamMessages } from './support';
import { useProjectorApi, getJson } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const api = useProjectorApi();
/** Every run's summary as the fold of its log says it, computed without the API. */
let expected: RunSummary[] = [];

const BASE = Date.UTC(2025, 2, 1);
const KINDS = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'rejected'] as const;

/** Run i: its kind cycles through the statuses; several runs share a creation time, so ids break ties. */
function script(i: number): RunScript {
  const kind = KINDS[i % KINDS.length]!;
  const runId = `run-${String(i).padStart(2, '0')}`;
  const tags = ['all', ...(i % 2 === 0 ? ['even'] : []), ...(i % 3 === 0 ? ['three'] : [])];
  const s = new RunScript(runId, BASE + (i % 13) * 60_000).request([], { tags, metadata: { i: String(i) } });
  if (kind === 'pending') return s;
  if (kind === 'rejected')
    return s.add('run_rejected', { error: { code: 'bad_plan', message: `run ${i} was refused` } });
  s.start();
  for (let c = 0; c < i % 4; c += 1) s.call(c % 2 === 0 ? 'echo' : 'demo.build', { c }, { c });
  if (kind === 'running') {
    const call = { callId: 'call-x', tool: 'demo.deploy', args: {} };
    const step = s.events.filter((e) => e.type === 'tool_call_requested').length;
    s.add('thought', {
      step,
      model: { id: 'scripted', promptVersion: 'test' },
      decision: { kind: 'tool_calls', calls: [call] },
      usage: { inputTokens: 3, outputTokens: 1 },
      finishReason: 'tool_calls',
    }).add('tool_call_requested', { ...call, step: step + 1, idempotencyKey: `k-${i}` });
  }
  if (kind === 'waiting') s.add('wait_requested', { waitId: `w-${i}`, kind: 'signal', signal: 'go' });
  if (kind === 'completed') s.finish({ i });
  if (kind === 'failed') s.add('run_failed', { error: { code: 'gave_up', message: `run ${i} failed` } });
  if (kind === 'cancelled') s.add('run_cancelled', { reason: 'not needed' });
  return s;
}

/** A child run of an agent pinned to version 3, which spent a quarter of a dollar on one model call. */
function childRun(): RunScript {
  const pinned = { agent: 'triage', version: '3', promptVersion: 'p3', provider: 'scripted', model: 'm' };
  return new RunScript('run-child', BASE)
    .add('run_requested', {
      request: {
        v: 1,
        runId: 'run-child',
        agent: { kind: 'agent', name: 'triage' },
        parent: { runId: 'run-03', callId: 'call-1' },
      },
    })
    .add('run_started', { pinned })
    .add('thought', {
      step: 0,
      model: { id: 'm', promptVersion: 'p3' },
      decision: { kind: 'complete', output: 'ok' },
      usage: { inputTokens: 10, outputTokens: 5 },
      finishReason: 'stop',
      costUsd: 0.25,
    })
    .add('run_completed', { output: 'ok' });
}

beforeAll(async () => {
  await api().project([...Array.from({ length: 42 }, (_, i) => script(i)), childRun()]);
  expected = [...foldLog(await streamMessages(api().setup))].map(([runId, state]) => {
    const c = summarize(runId, state);
    return {
      runId,
      status: c.status as RunSummary['status'],
      createdAt: c.createdAt,
      updatedAt: c.updatedAt,
      steps: c.steps,
      pendingCalls: c.pendingCalls,
      lastError: c.lastError ?? null,
      usage: { inputTokens: c.inputTokens, outputTokens: c.outputTokens },
      tags: c.tags,
      metadata: c.metadata,
      lastSeq: c.lastSeq,
      tenant: state.tenant,
      agent: agentLabel(state),
      parentRunId: state.request?.parent?.runId ?? null,
      children: state.children.length,
      costUsd: state.budget.costUsd,
    };
  });
});

const get = (path: string) => getJson(api().http.url, path);

/** Follows `nextCursor` to the end; every page is full but the last, and only the last has no cursor. */
async function everyPage(query: string, limit: number): Promise<RunSummary[]> {
  const seen: RunSummary[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages += 1) {
    const qs = new URLSearchParams(query);
    qs.set('limit', String(limit));
    if (cursor) qs.set('cursor', cursor);
    const { status, body } = await get(`/runs?${qs.toString()}`);
    expect(status).toBe(200);
    const page = RunListResponseSchema.parse(body);
    seen.push(...page.runs);
    if (page.nextCursor === undefined) {
      expect(page.runs.length).toBeLessThanOrEqual(limit);
      return seen;
    }
    expect(page.runs).toHaveLength(limit);
    cursor = page.nextCursor;
  }
  throw new Error('more than 100 pages');
}

const byKey =
  (key: 'createdAt' | 'updatedAt', dir: 1 | -1) =>
  (a: RunSummary, b: RunSummary): number =>
    dir * (Date.parse(a[key]) - Date.parse(b[key]) || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
const ids = (list: RunSummary[]) => list.map((run) => run.runId);

describe('GET /runs pages', () => {
  it('has every run once, newest activity first, whatever the page size', async () => {
    const want = [...expected].sort(byKey('updatedAt', -1));
    expect(want).toHaveLength(43);
    for (const limit of [1, 7, 43, 500]) expect(await everyPage('', limit)).toEqual(want);
  });

  it('sorts by creation time both ways, ids breaking the ties of runs created together', async () => {
    expect(ids(await everyPage('sort=created_desc', 5))).toEqual(
      ids([...expected].sort(byKey('createdAt', -1))),
    );
    expect(ids(await everyPage('sort=created_asc', 5))).toEqual(
      ids([...expected].sort(byKey('createdAt', 1))),
    );
    const shared = expected.filter((run) => run.createdAt === expected[0]!.createdAt);
    expect(shared.length).toBeGreaterThan(1);
  });

  it('summarizes each run as its fold says: status, steps, pending calls, last error, usage, labels', async () => {
    const { body } = await get('/runs?limit=500');
    expect(RunListResponseSchema.parse(body).runs).toEqual(expect.arrayContaining(expected));
    const running = expected.find((run) => run.runId === 'run-08');
    expect(running).toMatchObject({ status: 'running', pendingCalls: 1, steps: 1, tags: ['all', 'even'] });
    expect(expected.find((run) => run.runId === 'run-04')).toMatchObject({
      status: 'failed',
      lastError: { code: 'gave_up', message: 'run 4 failed' },
      metadata: { i: '4' },
      agent: 'scripted',
      parentRunId: null,
      costUsd: 0,
    });
    // What `dura ls` shows in its AGENT, PARENT and COST columns, read off the stored state.
    expect(RunListResponseSchema.parse(body).runs.find((run) => run.runId === 'run-child')).toMatchObject({
      agent: 'triage@3',
      parentRunId: 'run-03',
      costUsd: 0.25,
    });
  });
});

describe('GET /runs filters', () => {
  const newest = (filter: (run: RunSummary) => boolean) =>
    ids(expected.filter(filter).sort(byKey('updatedAt', -1)));

  it('by one status, by several (repeated or comma-separated)', async () => {
    expect(ids(await everyPage('status=completed', 2))).toEqual(newest((r) => r.status === 'completed'));
    const live = newest((r) => r.status === 'running' || r.status === 'waiting');
    expect(ids(await everyPage('status=running&status=waiting', 3))).toEqual(live);
    expect(ids(await everyPage('status=running,waiting', 3))).toEqual(live);
  });

  it('by tags, every tag asked for', async () => {
    expect(ids(await everyPage('tag=even', 4))).toEqual(newest((r) => r.tags.includes('even')));
    const both = newest((r) => r.tags.includes('even') && r.tags.includes('three'));
    expect(both.length).toBeGreaterThan(2);
    expect(ids(await everyPage('tag=even&tag=three', 2))).toEqual(both);
    expect(ids(await everyPage('tag=nobody', 2))).toEqual([]);
  });

  it('by a tool the run used', async () => {
    const states = foldLog(await streamMessages(api().setup));
    const used = (tool: string) => (r: RunSummary) => states.get(r.runId)!.calls.some((c) => c.tool === tool);
    expect(ids(await everyPage('tool=demo.deploy', 2))).toEqual(newest(used('demo.deploy')));
    expect(ids(await everyPage('tool=demo.build&sort=created_asc', 3))).toEqual(
      ids(expected.filter(used('demo.build')).sort(byKey('createdAt', 1))),
    );
  });

  it('by a creation window, from createdAfter (included) to createdBefore (excluded)', async () => {
    const after = new Date(BASE + 2 * 60_000).toISOString();
    const before = new Date(BASE + 5 * 60_000).toISOString();
    const inWindow = (r: RunSummary) => r.createdAt >= after && r.createdAt < before;
    const got = await everyPage(`createdAfter=${after}&createdBefore=${before}&sort=created_asc`, 4);
    expect(ids(got)).toEqual(ids(expected.filter(inWindow).sort(byKey('createdAt', 1))));
    expect(got.length).toBeGreaterThan(4);
    expect(ids(await everyPage('createdBefore=2025-03-01', 4))).toEqual([]);
  });

  it('combined, across pages', async () => {
    const after = new Date(BASE + 3 * 60_000).toISOString();
    const want = newest(
      (r) =>
        (r.status === 'completed' || r.status === 'failed') &&
        r.tags.includes('even') &&
        r.createdAt >= after,
    );
    expect(want.length).toBeGreaterThan(3);
    expect(ids(await everyPage(`status=completed,failed&tag=even&createdAfter=${after}`, 1))).toEqual(want);
  });
});

describe('GET /runs refuses, with a message saying what to do', () => {
  async function refused(query: string, code = 'bad_query'): Promise<string> {
    const { status, body } = await get(`/runs?${query}`);
    expect(status).toBe(400);
    const { error } = ApiErrorSchema.parse(body);
    expect(error.code).toBe(code);
    return error.message;
  }

  it('a cursor it did not issue, or one issued for another sort', async () => {
    expect(await refused('cursor=not-a-cursor', 'bad_cursor')).toMatch(
      /is not a cursor this API issued: pass nextCursor of the previous page unchanged/,
    );
    const forged = Buffer.from(JSON.stringify({ s: 'updated_desc', k: 'noon', id: 'run-01' })).toString(
      'base64url',
    );
    expect(await refused(`cursor=${forged}`, 'bad_cursor')).toMatch(/not a cursor this API issued/);
    const page = RunListResponseSchema.parse((await get('/runs?sort=created_asc&limit=2')).body);
    expect(await refused(`cursor=${page.nextCursor}`, 'bad_cursor')).toBe(
      'cursor was issued for sort=created_asc, but this request asks for sort=updated_desc: keep the sort of the first page while paging, or leave cursor out to start again',
    );
  });

  it.each([
    ['status=done', /status: "done" is not a run status; use one of pending, running/],
    ['limit=0', /limit must be an integer from 1 to 500, got "0"/],
    ['limit=501', /limit must be an integer from 1 to 500/],
    ['limit=ten', /limit must be an integer/],
    ['sort=oldest', /sort must be one of updated_desc, created_desc, created_asc, got "oldest"/],
    ['createdAfter=yesterday', /createdAfter must be an ISO 8601 date or date-time with a zone/],
    ['createdBefore=2025-03-01T10:00', /createdBefore must be an ISO 8601 date/],
    [`tag=${'x'.repeat(65)}`, /tag: "x+" must have 1 to 64 characters/],
    ['tool=Deploy', /tool: "Deploy" is not a tool name \(dotted lower-case words, e.g. http.request\)/],
  ])('?%s', async (query, message) => {
    expect(await refused(query)).toMatch(message);
  });
});

describe('GET /runs plans', () => {
  /** The plan Postgres picks when sorting is priced out: a query its indexes cannot order keeps a Sort node. */
  async function plan(query: string): Promise<string> {
    const statement = listRunsSql(parseListQuery(new URLSearchParams(query)));
    return api().conn.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_sort = off`);
      await tx.execute(sql`set local enable_seqscan = off`);
      const [row] = rowsOf<{ 'QUERY PLAN': unknown }>(
        await tx.execute(sql`explain (format json) ${statement}`),
      );
      return JSON.stringify(row?.['QUERY PLAN']);
    });
  }

  it.each([
    ['', 'runs_updated_idx'],
    ['sort=created_desc', 'runs_created_idx'],
    ['sort=created_asc&createdAfter=2025-03-01T00:02:00Z', 'runs_created_idx'],
    ['status=waiting', 'runs_status_updated_idx'],
    ['tag=even', 'runs_updated_idx'],
  ])('?%s reads %s in order, without sorting', async (query, index) => {
    const page = RunListResponseSchema.parse((await get(`/runs?${query}&limit=3`)).body);
    for (const q of [query, `${query}&cursor=${page.nextCursor}`]) {
      const text = await plan(q);
      expect(text).toContain(`"Index Name":"${index}"`);
      expect(text).not.toMatch(/"Node Type":"(Incremental )?Sort"/);
    }
  });
  it('reads a tenant-scoped caller page from runs_tenant_updated_idx in order, without sorting', async () => {
    const statement = listRunsSql({ ...parseListQuery(new URLSearchParams('limit=3')), tenant: 'acme' });
    const text = await api().conn.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_sort = off`);
      await tx.execute(sql`set local enable_seqscan = off`);
      const [row] = rowsOf<{ 'QUERY PLAN': unknown }>(
        await tx.execute(sql`explain (format json) ${statement}`),
      );
      return JSON.stringify(row?.['QUERY PLAN']);
    });
    expect(text).toContain('"Index Name":"runs_tenant_updated_idx"');
    expect(text).not.toMatch(/"Node Type":"(Incremental )?Sort"/);
  });
});
