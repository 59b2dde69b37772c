// I: many real runs suspended on signals and durable timers, then idle: what waiting costs, and that the
// runs still wake up when signalled.
import { setTimeout as sleep } from 'node:timers/promises';
import { createDuraClient } from '@dura/client';
import { SUBJECTS, type JsonObject } from '@dura/contracts';
import { EVENT_TYPE_HEADER } from '@dura/event-store';
import { openDeployment, startServices, type Deployment } from '../deployment';
import { countReporter, progress } from '../progress';
import type { BenchScenarios } from '../schema';
import { distribution, round } from '../stats';
import { lastRunSeq } from '../stream-log';
import { measureIdleWindow } from './idle-window';
import { waitForCheckpoint } from './projector';

type WaitsResult = NonNullable<BenchScenarios['waits']>;

const SUBMIT_IN_FLIGHT = 200;
const RESUME_TIMEOUT_MS = 60_000;
const ENDED = new Set(['run_completed', 'run_failed', 'run_cancelled', 'run_rejected']);

const signalRunId = (i: number) => `wsig-${String(i).padStart(6, '0')}`;
const timerRunId = (i: number) => `wtmr-${String(i).padStart(6, '0')}`;

/** A run that waits for the signal `go` (or sleeps an hour), then makes one echo call and completes. */
function waitingRequest(runId: string, kind: 'signal' | 'timer') {
  const wait: { tool: string; args: JsonObject } =
    kind === 'signal'
      ? { tool: 'dura.wait_for_signal', args: { name: 'go' } }
      : { tool: 'dura.sleep', args: { seconds: 3600 } };
  return { runId, agent: { kind: 'scripted' as const, steps: [wait, { tool: 'echo', args: { n: 1 } }] } };
}

/** Runs by wait kind among those the read model shows waiting, and every other status by name. */
async function statusCounts(deployment: Deployment): Promise<Record<string, number>> {
  const rows = await deployment.sql<{ status: string; kind: string | null; n: number }[]>`
    select status, state->'waiting'->>'kind' as kind, count(*)::int as n from runs group by 1, 2`;
  return Object.fromEntries(
    rows.map((r) => [r.status === 'waiting' ? `waiting:${r.kind ?? 'none'}` : r.status, r.n]),
  );
}

async function timerRows(deployment: Deployment): Promise<{ rows: number; unfired: number }> {
  const [row] = await deployment.sql<{ rows: number; unfired: number }[]>`
    select count(*)::int as rows, (count(*) filter (where fired_at is null))::int as unfired from timers`;
  return row ?? { rows: 0, unfired: 0 };
}

/**
 * Resolves once every run is projected as waiting and every timer run's timer is stored; polls once a
 * second. Throws as soon as a run ended instead, saying which and why.
 */
async function waitUntilSuspended(
  deployment: Deployment,
  want: { signal: number; timer: number },
  timeoutMs: number,
): Promise<{ waiting: { signal: number; timer: number } }> {
  const deadline = Date.now() + timeoutMs;
  let lastReport = 0;
  for (;;) {
    const counts = await statusCounts(deployment);
    const timers = await timerRows(deployment);
    const signal = counts['waiting:signal'] ?? 0;
    const timer = counts['waiting:timer'] ?? 0;
    const ended = Object.keys(counts).filter((k) => ENDED.has(`run_${k}`));
    if (ended.length > 0) {
      const sample = await deployment.sql<{ run_id: string; status: string; last_error: unknown }[]>`
        select run_id, status, last_error from runs where status = any(${ended}) limit 3`;
      throw new Error(
        `runs meant to wait ended instead (${JSON.stringify(counts)}), e.g. ${JSON.stringify(sample)}; ` +
          'read the planner log of the failed runs',
      );
    }
    if (signal === want.signal && timer === want.timer && timers.unfired === want.timer)
      return { waiting: { signal, timer } };
    if (Date.now() > deadline)
      throw new Error(
        `after ${timeoutMs} ms ${signal}/${want.signal} signal runs and ${timer}/${want.timer} timer runs are ` +
          `waiting, ${timers.unfired} timers stored (${JSON.stringify(counts)}); timer runs stuck short of ` +
          'waiting mean the tool-gateway is not storing timer tasks',
      );
    if (Date.now() - lastReport > 5_000) {
      progress(
        `I: waiting ${signal + timer}/${want.signal + want.timer} (signal ${signal}, timer ${timer}), ` +
          `timers stored ${timers.unfired}`,
      );
      lastReport = Date.now();
    }
    await sleep(1_000);
  }
}

/** Submits every request with `SUBMIT_IN_FLIGHT` publishes outstanding at a time. */
async function submitAll(
  deployment: Deployment,
  requests: ReturnType<typeof waitingRequest>[],
): Promise<void> {
  const client = createDuraClient(deployment);
  const report = countReporter('I: submitted', requests.length);
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < requests.length) {
      const request = requests[next++] as ReturnType<typeof waitingRequest>;
      await client.submitRun(request);
      report(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SUBMIT_IN_FLIGHT, requests.length) }, lane));
}

/** The `dura_timers_pending` gauge as the gateway reports it on its /metrics. */
async function gatewayPendingTimers(deployment: Deployment): Promise<number> {
  const gateway = deployment.services.find((s) => s.label === 'tool-gateway-1');
  const line = gateway?.proc
    .output()
    .split('\n')
    .find((l) => l.includes('"metrics listening"'));
  const url = line ? (JSON.parse(line.slice(line.indexOf('{'))) as { url?: string }).url : undefined;
  if (!url)
    throw new Error('the tool-gateway logged no "metrics listening" line; is METRICS_PORT passed to it?');
  const text = await (await fetch(url)).text();
  const value = /^dura_timers_pending(?:\{[^}]*\})?\s+(\S+)/m.exec(text)?.[1];
  if (value === undefined) throw new Error(`${url} has no dura_timers_pending gauge`);
  return Number(value);
}

/** Signals `count` of the signal runs one at a time; each time from the signal's publish to its end event seen. */
async function resumeSample(deployment: Deployment, count: number): Promise<WaitsResult['resume']> {
  const client = createDuraClient(deployment);
  const ended = new Map<string, (type: string) => void>();
  const sub = deployment.nc.subscribe(SUBJECTS.allRuns, {
    callback: (_err, msg) => {
      const type = msg.headers?.get(EVENT_TYPE_HEADER) ?? '';
      if (ENDED.has(type)) ended.get(msg.subject.slice(SUBJECTS.runPrefix.length + 1))?.(type);
    },
  });
  await deployment.nc.flush();
  const samples: number[] = [];
  const outcomes: Record<string, number> = {};
  try {
    for (let i = 1; i <= count; i += 1) {
      const runId = signalRunId(i);
      const end = new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve('timed_out'), RESUME_TIMEOUT_MS);
        ended.set(runId, (type) => {
          clearTimeout(timer);
          resolve(type.replace(/^run_/, ''));
        });
      });
      const began = performance.now();
      await client.signal(runId, 'go', { signalId: 'bench-go', payload: { i } });
      const outcome = await end;
      ended.delete(runId);
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      if (outcome === 'completed') samples.push(performance.now() - began);
    }
  } finally {
    sub.unsubscribe();
  }
  return {
    signalled: count,
    completed: outcomes['completed'] ?? 0,
    outcomes,
    signalToCompletedMs: distribution(samples),
  };
}

export async function waitsCost(sizes: {
  waitRuns: number;
  waitResumes: number;
  idleSeconds: number;
}): Promise<WaitsResult> {
  const signalRuns = Math.ceil(sizes.waitRuns / 2);
  const timerRuns = sizes.waitRuns - signalRuns;
  // A metrics port on every service (free ports) so the gateway's own count of pending timers can be read.
  await using deployment = await openDeployment('waits', { METRICS_PORT: '0' });
  await startServices(deployment, { gateways: 1, planners: 1 });
  const requests = Array.from({ length: signalRuns }, (_, k) => [
    waitingRequest(signalRunId(k + 1), 'signal'),
    ...(k < timerRuns ? [waitingRequest(timerRunId(k + 1), 'timer')] : []),
  ]).flat();

  const began = performance.now();
  await submitAll(deployment, requests);
  const suspended = await waitUntilSuspended(
    deployment,
    { signal: signalRuns, timer: timerRuns },
    Math.max(300_000, sizes.waitRuns * 100),
  );
  const suspendMs = performance.now() - began;
  // Idle means after the projector has folded every event in.
  await waitForCheckpoint(deployment, await lastRunSeq(deployment.jsm), 600_000);

  progress(`I: idle for ${sizes.idleSeconds} s with ${sizes.waitRuns} waiting runs`);
  const window = await measureIdleWindow(deployment, sizes.idleSeconds);

  // Read after the window, so the reading is not counted in it.
  const waitingEnd = await statusCounts(deployment);
  const timers = await timerRows(deployment);
  const gatewayPending = await gatewayPendingTimers(deployment);

  progress(`I: signalling ${sizes.waitResumes} waiting runs one at a time`);
  const resume = await resumeSample(deployment, Math.min(sizes.waitResumes, signalRuns));
  return {
    mode: 'processes',
    note:
      'scripted runs submitted on dura.submit, half waiting for the signal "go", half on dura.sleep of 3600 s; ' +
      'the window starts once all are projected as waiting and every timer is stored; postgres counts the ' +
      "backends of this deployment's database only; resume signals runs one at a time, client-observed " +
      'from the signal publish to run_completed seen',
    runs: sizes.waitRuns,
    suspendMs: round(suspendMs),
    waitingStart: suspended.waiting,
    waitingEnd: {
      signal: waitingEnd['waiting:signal'] ?? 0,
      timer: waitingEnd['waiting:timer'] ?? 0,
    },
    windowSeconds: sizes.idleSeconds,
    processes: window.processes,
    postgres: window.postgres,
    timers: { rows: timers.rows, unfiredRows: timers.unfired, gatewayPending },
    resume,
  };
}
