// H: the read API's run list over N projected runs: p50/p99 of one page per typical query shape.
import { runSubject, RunListResponseSchema, type RunEvent } from '@dura/contracts';
import { RunLog } from '@dura/core/testing';
import { openDatabase } from '@dura/db';
import { applyBatch, migrateProjector, projectorRoutes, type StreamMessage } from '@dura/projector';
import { createLogger, startHttpServer } from '@dura/service-kit';
import { openDeployment } from '../deployment';
import { progress } from '../progress';
import type { BenchScenarios } from '../schema';
import { distribution, round } from '../stats';

const BATCH = 500;
const DAY_MS = 86_400_000;
const encoder = new TextEncoder();

/**
 * Run i of n: a status drawn from a fixed mix (70% completed, 10% failed, 10% running, 5% waiting, 3% pending,
 * 2% cancelled), one to three calls of 20 tools (`tool.rare` in 0.1% of runs), tags `team-<i % 10>`, `nightly`
 * on half and `rare` on 0.1%, created over 30 days.
 */
function benchRun(i: number, n: number): RunEvent[] {
  const runId = `list-${String(i).padStart(7, '0')}`;
  const rare = i % 1000 === 7;
  const tags = [`team-${i % 10}`, ...(i % 2 === 0 ? ['nightly'] : []), ...(rare ? ['rare'] : [])];
  const start = Date.UTC(2025, 0, 1) + Math.floor((i * 30 * DAY_MS) / n);
  const at = (e: RunEvent, k: number): RunEvent => ({
    ...e,
    meta: { ...e.meta, ts: new Date(start + k * 1000).toISOString() },
  });
  const log = new RunLog(runId).add('run_requested', {
    request: { v: 1, runId, agent: { kind: 'scripted', steps: [] }, tags, metadata: { n: String(i) } },
  });
  const mix = i % 100;
  if (mix >= 97) return log.events.map(at);
  log.start();
  const calls = 1 + (i % 3);
  for (let c = 1; c <= calls; c += 1) {
    const tool = rare && c === 1 ? 'tool.rare' : `tool.t${String((i + c) % 20).padStart(2, '0')}`;
    log.think([{ tool, args: { c } }]).intents();
    if (mix < 80 || c < calls) log.complete(`call-${log.stepCount}`, { c });
  }
  if (mix < 70) log.finish({ i });
  else if (mix < 80) log.add('run_failed', { error: { code: 'tool_failed', message: `run ${i} failed` } });
  else if (mix < 90)
    return log.events.map(at); // running, its last call pending
  else if (mix < 95) {
    log.complete(`call-${log.stepCount}`, {});
    log.add('wait_requested', { waitId: `w-${i}`, kind: 'signal', signal: 'go' });
  } else {
    log.complete(`call-${log.stepCount}`, {});
    log.add('run_cancelled', { reason: 'bench' });
  }
  return log.events.map(at);
}

/** Streams every run's events as the projector reads them: each run's events in a row, sequences from 1. */
function* streamMessages(runs: number): Generator<StreamMessage> {
  let seq = 0;
  for (let i = 0; i < runs; i += 1)
    for (const { seq: _seq, ...event } of benchRun(i, runs)) {
      seq += 1;
      yield { seq, subject: runSubject(event.meta.runId), data: encoder.encode(JSON.stringify(event)) };
    }
}

export async function listQueries(sizes: {
  listRuns: number;
  listSamples: number;
}): Promise<NonNullable<BenchScenarios['list']>> {
  await using deployment = await openDeployment('list');
  const database = await openDatabase({ url: deployment.db.url, maxConnections: 4 });
  const http = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    routes: projectorRoutes({ db: database.db, position: () => 0, js: deployment.js, jsm: deployment.jsm }),
    log: createLogger({ service: 'bench-list', level: 'error', write: () => undefined }),
  });
  try {
    await migrateProjector(database);
    // The projector's own batch path: one transaction per 500 messages, as a catching-up projector applies them.
    const began = performance.now();
    let batch: StreamMessage[] = [];
    let events = 0;
    let batches = 0;
    const flush = async () => {
      events += (await applyBatch(database.db, batch)).applied;
      batch = [];
      if (++batches % 200 === 0) progress(`H: projected ${events} events`);
    };
    for (const msg of streamMessages(sizes.listRuns)) {
      batch.push(msg);
      if (batch.length === BATCH) await flush();
    }
    await flush();
    const projectMs = performance.now() - began;
    await deployment.sql`analyze runs`;
    const [counted] = await deployment.sql<{ runs: number }[]>`select count(*)::int as runs from runs`;

    const get = async (query: string) => {
      const response = await fetch(`${http.url}/runs?${query}`);
      if (!response.ok)
        throw new Error(`GET /runs?${query}: HTTP ${response.status} ${await response.text()}`);
      return RunListResponseSchema.parse(await response.json());
    };
    // Deep cursors, found the way a client finds them: following nextCursor from the first page.
    const deep: string[] = [];
    let cursor: string | undefined;
    const pageSize = Math.min(500, Math.max(10, Math.floor(sizes.listRuns / 20)));
    const walk = Math.floor(sizes.listRuns / 2 / pageSize);
    for (let page = 0; page < walk; page += 1) {
      const more = cursor ? `&cursor=${cursor}` : '';
      const next: string | undefined = (await get(`limit=${pageSize}${more}`)).nextCursor;
      if (!next) break;
      cursor = next;
      if (page >= walk / 2) deep.push(next);
    }
    const windowStart = new Date(Date.UTC(2025, 0, 11)).toISOString();
    const windowEnd = new Date(Date.UTC(2025, 0, 12)).toISOString();
    const shapes: [string, (k: number) => string][] = [
      ['first page', () => 'limit=50'],
      ['deep page (cursor)', (k) => `limit=50&cursor=${deep[k % deep.length] ?? ''}`],
      ['status=running', () => 'status=running&limit=50'],
      ['status=failed,cancelled', () => 'status=failed,cancelled&limit=50'],
      ['tag (10% of runs)', () => 'tag=team-3&limit=50'],
      ['tag (0.1%)', () => 'tag=rare&limit=50'],
      ['two tags', () => 'tag=team-4&tag=nightly&limit=50'],
      ['tool (15%)', () => 'tool=tool.t07&limit=50'],
      ['tool (0.1%)', () => 'tool=tool.rare&limit=50'],
      [
        'created window, newest first',
        () => `createdAfter=${windowStart}&createdBefore=${windowEnd}&sort=created_desc`,
      ],
      ['status + tag', () => 'status=completed&tag=team-3&limit=50'],
    ];
    const queries = [];
    for (const [shape, query] of shapes) {
      progress(`H: ${shape}`);
      for (let k = 0; k < 3; k += 1) await get(query(k));
      const samples: number[] = [];
      let rows = 0;
      for (let k = 0; k < sizes.listSamples; k += 1) {
        const t = performance.now();
        rows = (await get(query(k))).runs.length;
        samples.push(performance.now() - t);
      }
      queries.push({ shape, query: query(0), rows, latencyMs: distribution(samples) });
    }
    return {
      mode: 'in-process',
      runs: counted?.runs ?? 0,
      events,
      note:
        'runs projected through applyBatch (500 messages a transaction) into a fresh database, then ANALYZE; ' +
        'each figure is one GET /runs over HTTP on this machine, sequential, after 3 warm-up requests',
      projectMs: round(projectMs),
      projectEventsPerSecond: round((events * 1000) / projectMs),
      queries,
    };
  } finally {
    await http.close();
    await database.close();
  }
}
