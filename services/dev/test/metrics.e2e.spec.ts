// Issue acceptance: each service's Prometheus endpoint, scraped after real runs, shows its counters moved
// by exactly what the runs did.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import { SUBJECTS, TASK_VERSION, toolTaskSubject, type RunEvent, type ToolTask } from '@dura/contracts';
import { useTestInfra, type ManagedProcess } from '@dura/testing';
import { echoPlan, eventually, openSystem, startService, type SystemHandles } from './system';

const infra = useTestInfra();
let system: SystemHandles;
const processes = new Map<string, ManagedProcess>();
let env: Record<string, string>;

beforeAll(async () => {
  system = await openSystem(infra().nats.url, infra().db.url);
  env = { ...system.env, METRICS_PORT: '0', GATEWAY_ACK_WAIT_MS: '5000' };
  // Calls as tool tasks first: the first test counts their deliveries, repeats and retries; the last one
  // restarts the planner with direct calls.
  const planner = { PLANNER_DIRECT_CALLS: 'false' };
  for (const name of ['tool-gateway', 'projector', 'planner'] as const)
    processes.set(name, await startService(name, name === 'planner' ? { ...env, ...planner } : env));
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([...processes.values()].map((proc) => proc.kill('SIGTERM')));
  await system?.close();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition format (one sample per line, `#` lines skipped). */
function parseExposition(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line.length > 0 && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
      );
      return { name: match[1] as string, labels, value: Number(match[3]) };
    });
}

/** The URL a service logged for its metrics endpoint (METRICS_PORT=0 picks a free port). */
function metricsUrl(service: string): string {
  if (service === 'projector') return `${system.apiUrl}/metrics`;
  const url = /"msg":"metrics listening","url":"([^"]+)"/.exec(processes.get(service)?.output() ?? '')?.[1];
  if (!url) throw new Error(`${service} logged no metrics URL`);
  return url;
}

async function scrape(service: string): Promise<(name: string, labels?: Record<string, string>) => number> {
  const response = await fetch(metricsUrl(service));
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  const samples = parseExposition(await response.text());
  // The sum over the series of `name` whose labels include `labels`; 0 when there is none.
  return (name, labels = {}) =>
    samples
      .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
}

async function runToEnd(runId: string): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of createDuraClient(system).watchRun(runId)) events.push(event);
  return events;
}

describe('metrics of each service after real runs', () => {
  it('move by what the runs did', async () => {
    const before = {
      planner: await scrape('planner'),
      gateway: await scrape('tool-gateway'),
    };
    expect(before.planner('dura_decision_duration_seconds_count')).toBe(0);
    expect(before.gateway('dura_tool_call_duration_seconds_count')).toBe(0);

    // A 3-step run, then one of its tool tasks delivered again under another message id (a duplicate the
    // stream's dedupe cannot catch): the ledger's recorded result answers it. `echo` is read-only, so the
    // repeat's first delivery runs it without a claim; its result is dropped for the recorded one.
    const events = await (async () => {
      await system.js.publish(SUBJECTS.submit, JSON.stringify(echoPlan('metrics-echo', 3)), {
        msgID: 'metrics-echo',
      });
      return runToEnd('metrics-echo');
    })();
    expect(events.at(-1)?.type).toBe('run_completed');
    const intent = events.find((e) => e.type === 'tool_call_requested');
    if (intent?.type !== 'tool_call_requested') throw new Error('no intent');
    const repeat: ToolTask = {
      v: TASK_VERSION,
      runId: 'metrics-echo',
      callId: intent.data.callId,
      step: intent.data.step,
      tool: intent.data.tool,
      args: intent.data.args,
      idempotencyKey: intent.data.idempotencyKey,
      causationId: intent.meta.id,
      correlationId: 'metrics-echo',
    };
    await system.js.publish(toolTaskSubject('echo'), JSON.stringify(repeat), { msgID: 'metrics-repeat' });

    // A run whose only call keeps failing with a retryable error: retried, then failed.
    const failing = {
      v: 1,
      runId: 'metrics-fail',
      agent: { kind: 'scripted', steps: [{ tool: 'demo.fail', args: { retryable: true } }] },
    };
    await system.js.publish(SUBJECTS.submit, JSON.stringify(failing), { msgID: 'metrics-fail' });
    const failed = await runToEnd('metrics-fail');
    const attempts = failed.filter((e) => e.type === 'tool_call_failed');
    expect(attempts.length).toBeGreaterThanOrEqual(2);

    const gateway = await eventually(
      async () => {
        const read = await scrape('tool-gateway');
        // The repeat's observation goes through the outbox again: wait until the relay sent it too.
        const answered = read('dura_effects_deduplicated_total', { tool: 'echo' }) === 1;
        return answered && read('dura_outbox_pending_rows') === 0 ? read : undefined;
      },
      'the gateway to answer the repeated task from the ledger and relay its observation',
      30_000,
    );
    // Three steps and the repeat's run, whose result was dropped.
    expect(gateway('dura_tool_call_duration_seconds_count', { tool: 'echo', outcome: 'succeeded' })).toBe(4);
    expect(gateway('dura_tool_call_duration_seconds_count', { tool: 'demo.fail' })).toBe(attempts.length);
    expect(gateway('dura_retries_total', { operation: 'tool_call' })).toBe(attempts.length - 1);
    // Each retry is the same task delivered again.
    expect(
      gateway('dura_consumer_redeliveries_total', { stream: 'DURA_TASKS', consumer: 'tool-gateway' }),
    ).toBe(attempts.length - 1);
    expect(gateway('dura_tool_call_duration_seconds_bucket', { tool: 'echo', le: '+Inf' })).toBe(4);
    expect(gateway('dura_outbox_pending_rows')).toBe(0);
    expect(gateway('dura_outbox_lag_seconds')).toBe(0);

    const planner = await scrape('planner');
    const decisions =
      events.filter((e) => e.type === 'thought').length + failed.filter((e) => e.type === 'thought').length;
    expect(planner('dura_decision_duration_seconds_count', { outcome: 'recorded' })).toBe(decisions);
    expect(planner('dura_consumer_pending_messages', { consumer: 'planner-decide' })).toBe(0);
    expect(planner('dura_decision_conflicts_lost_total')).toBe(0);

    const projector = await eventually(
      async () => {
        const read = await scrape('projector');
        return read('dura_runs', { status: 'failed' }) === 1 ? read : undefined;
      },
      'the projector to count the failed run',
      30_000,
    );
    expect(projector('dura_runs', { status: 'completed' })).toBe(1);
  });
});

describe('metrics of direct calls', () => {
  it('count each call a planner handed straight to a gateway, by outcome', async () => {
    await processes.get('planner')?.kill('SIGTERM');
    processes.set('planner', await startService('planner', env));
    const before = (await scrape('planner'))('dura_direct_calls_total', { outcome: 'done' });
    expect(before).toBe(0);
    await system.js.publish(SUBJECTS.submit, JSON.stringify(echoPlan('metrics-direct', 2)), {
      msgID: 'metrics-direct',
    });
    const events = await runToEnd('metrics-direct');
    expect(events.at(-1)?.type).toBe('run_completed');
    const planner = await scrape('planner');
    expect(planner('dura_direct_calls_total', { outcome: 'done' })).toBe(2);
    expect(planner('dura_direct_calls_total')).toBe(2);
  });
});
