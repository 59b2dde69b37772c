// O: many real runs of a model agent waiting for capacity under a model limit, then idle: what waiting for
// capacity costs (issue 33: "10,000 runs waiting for capacity cost what D measures for suspended runs").
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDuraClient } from '@dura/client';
import { startFakeLlmServer } from '@dura/testing';
import { openDeployment, startServices, type Deployment } from '../deployment';
import { countReporter, progress } from '../progress';
import type { BenchScenarios } from '../schema';
import { round } from '../stats';
import { lastRunSeq } from '../stream-log';
import { measureIdleWindow } from './idle-window';
import { waitForCheckpoint } from './projector';

type CapacityResult = NonNullable<BenchScenarios['capacity']>;

const MODEL = 'openai/fake-1';
/** One call a minute: every run but the first few waits for capacity for the whole window. */
const REQUESTS_PER_MINUTE = 1;
const REASON = `capacity of ${MODEL} (`;
const SUBMIT_IN_FLIGHT = 200;
/** Share of the runs that must be projected as waiting for capacity (or completed) before the window opens. */
const SETTLED_SHARE = 0.99;

const runIdOf = (i: number) => `cap-${String(i).padStart(6, '0')}`;

/** Runs waiting for capacity, completed, and anything else (still starting, woken, failed), as projected. */
async function capacityCounts(
  deployment: Deployment,
): Promise<{ capacity: number; completed: number; other: number }> {
  const rows = await deployment.sql<{ bucket: string; n: number }[]>`
    select case
             when status = 'waiting' and starts_with(state->'waiting'->>'reason', ${REASON}) then 'capacity'
             when status = 'completed' then 'completed'
             else 'other'
           end as bucket,
           count(*)::int as n
      from runs group by 1`;
  const of = (name: string) => rows.find((r) => r.bucket === name)?.n ?? 0;
  return { capacity: of('capacity'), completed: of('completed'), other: of('other') };
}

/**
 * Resolves once (nearly) every run is projected as waiting for capacity; polls once a second. Gives up (and
 * says so) when the count stopped growing for `stallMs`: a design that keeps waiting runs busy never settles.
 */
async function waitUntilWaiting(
  deployment: Deployment,
  runs: number,
  stallMs: number,
): Promise<{ settled: boolean; counts: Awaited<ReturnType<typeof capacityCounts>> }> {
  let best = -1;
  let grewAt = Date.now();
  let lastReport = 0;
  for (;;) {
    const counts = await capacityCounts(deployment);
    const total = counts.capacity + counts.completed + counts.other;
    const settled = counts.capacity + counts.completed;
    if (total === runs && settled >= Math.ceil(runs * SETTLED_SHARE)) return { settled: true, counts };
    if (settled > best) {
      best = settled;
      grewAt = Date.now();
    }
    if (Date.now() - grewAt > stallMs) return { settled: false, counts };
    if (Date.now() - lastReport > 5_000) {
      progress(
        `O: ${counts.capacity} waiting for capacity, ${counts.completed} completed, ${counts.other} other`,
      );
      lastReport = Date.now();
    }
    await sleep(1_000);
  }
}

async function submitAll(deployment: Deployment, runs: number): Promise<void> {
  const client = createDuraClient(deployment);
  const report = countReporter('O: submitted', runs);
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < runs) {
      const runId = runIdOf(++next);
      await client.submitRun({ runId, agent: { kind: 'agent', name: 'writer' }, input: runId });
      report(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SUBMIT_IN_FLIGHT, runs) }, lane));
}

/** Bytes of the limit's shared record in `dura_flow` (its line included). */
async function limitRecordBytes(deployment: Deployment): Promise<number> {
  const subject = `$KV.dura_flow.l.${Buffer.from(MODEL, 'utf8').toString('base64url')}`;
  const message = await deployment.jsm.streams
    .getMessage('KV_dura_flow', { last_by_subj: subject })
    .catch(() => null);
  return message?.data.length ?? 0;
}

async function timerRows(deployment: Deployment): Promise<{ rows: number; unfiredRows: number }> {
  const [row] = await deployment.sql<{ rows: number; unfiredRows: number }[]>`
    select count(*)::int as rows, (count(*) filter (where fired_at is null))::int as "unfiredRows" from timers`;
  return row ?? { rows: 0, unfiredRows: 0 };
}

export async function capacityCost(sizes: {
  capacityRuns: number;
  idleSeconds: number;
}): Promise<CapacityResult> {
  const provider = await startFakeLlmServer({
    provider: 'openai',
    respond: () => ({ kind: 'message', content: 'done', usage: { inputTokens: 20, outputTokens: 2 } }),
  });
  const dir = await mkdtemp(join(tmpdir(), 'dura-bench-capacity-'));
  try {
    const agents = join(dir, 'agents.json');
    const model = {
      provider: 'openai',
      model: 'fake-1',
      baseUrl: provider.url,
      maxTokens: 50,
      maxAttempts: 2,
    };
    await writeFile(agents, JSON.stringify({ agents: [{ name: 'writer', version: '1', model }] }));
    const limit = { model: MODEL, requestsPerMinute: REQUESTS_PER_MINUTE };
    await using deployment = await openDeployment('capacity', {
      DURA_AGENTS: agents,
      PLANNER_TENANT_AGENTS: '*=*',
      DURA_MODEL_LIMITS: JSON.stringify([limit]),
    });
    await startServices(deployment, { gateways: 1, planners: 1 });

    const began = performance.now();
    await submitAll(deployment, sizes.capacityRuns);
    const waiting = await waitUntilWaiting(deployment, sizes.capacityRuns, 120_000);
    const suspendMs = performance.now() - began;
    // Idle means after the projector has folded every event in.
    await waitForCheckpoint(deployment, await lastRunSeq(deployment.jsm), 600_000);

    progress(`O: idle for ${sizes.idleSeconds} s with ${sizes.capacityRuns} runs waiting for capacity`);
    const seqStart = await lastRunSeq(deployment.jsm);
    const callsStart = provider.requests.length;
    const window = await measureIdleWindow(deployment, sizes.idleSeconds);
    const eventsAppended = (await lastRunSeq(deployment.jsm)) - seqStart;
    const modelCalls = provider.requests.length - callsStart;

    // Read after the window, so the reading is not counted in it.
    const waitingEnd = await capacityCounts(deployment);
    return {
      mode: 'processes',
      note:
        `runs of a model agent (fake OpenAI-compatible server) under ${REQUESTS_PER_MINUTE} request/min, ` +
        'submitted on dura.submit; the window opens once all are projected as waiting for capacity (or ' +
        `${Math.round(SETTLED_SHARE * 100)} % of them), or when that count stopped growing for 2 minutes ` +
        '(settled: false); postgres counts the backends of this ' +
        "deployment's database only; eventsAppended counts run events appended during the window (each " +
        'recheck of a waiting run appends a timer_fired and a wait_requested)',
      runs: sizes.capacityRuns,
      limit,
      suspendMs: round(suspendMs),
      settled: waiting.settled,
      waitingStart: waiting.counts,
      waitingEnd,
      windowSeconds: sizes.idleSeconds,
      processes: window.processes,
      postgres: window.postgres,
      during: { eventsAppended, modelCalls },
      limitRecordBytes: await limitRecordBytes(deployment),
      timers: await timerRows(deployment),
    };
  } finally {
    await provider.close();
    await rm(dir, { recursive: true, force: true });
  }
}
