// Issue acceptance (egress, hostile tenant): a submitted plan aims http.request at the stack's own internals,
// the planner's /metrics and the NATS monitoring /varz, over loopback and through `localhost`. With
// http.request enabled and the default egress policy, each call is recorded as tool_call_failed
// `egress_denied`, and nothing of those endpoints' bodies is in any event, in the log or through the read API.
// With http.request not enabled, the tool does not exist: the plan never reaches a gateway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import type { RunEvent } from '@dura/contracts';
import { createEventStore } from '@dura/event-store';
import {
  createTestDatabase,
  freePort,
  startNatsServer,
  type ManagedProcess,
  type NatsServerHandle,
  type TestDatabaseHandle,
} from '@dura/testing';
import { eventually, getJson, openSystem, startService, type SystemHandles } from './system';

let nats: NatsServerHandle;
let db: TestDatabaseHandle;
let system: SystemHandles;
let monitorUrl: string;
let metricsUrl: string;
let env: Record<string, string>;
const processes: ManagedProcess[] = [];
const running = new Map<string, ManagedProcess>();

async function start(name: 'planner' | 'tool-gateway' | 'projector', extra: Record<string, string> = {}) {
  await running.get(name)?.kill('SIGTERM');
  const proc = await startService(name, { ...env, ...extra });
  processes.push(proc);
  running.set(name, proc);
}

beforeAll(async () => {
  const monitorPort = await freePort();
  [nats, db] = await Promise.all([
    startNatsServer({ extraArgs: ['-m', String(monitorPort)] }),
    createTestDatabase({ prefix: 'hostile_egress' }),
  ]);
  monitorUrl = `http://127.0.0.1:${monitorPort}`;
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}`;
  system = await openSystem(nats.url, db.url);
  env = {
    ...system.env,
    DURA_HTTP_REQUEST_ENABLED: 'true',
    // Ignored where unknown (a service reads only the variables its schema declares).
    DURA_INLINE_PLANS: 'true',
    GATEWAY_ACK_WAIT_MS: '5000',
  };
  await start('tool-gateway');
  await start('projector');
  await start('planner', { METRICS_PORT: String(metricsPort) });
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((proc) => proc.kill('SIGTERM')));
  await system?.close();
  await Promise.allSettled([nats?.[Symbol.asyncDispose](), db?.[Symbol.asyncDispose]()]);
});

/** Strings only the real responses hold: the server's id and a metric the planner exports. */
async function needles(): Promise<string[]> {
  const varz = (await (await fetch(`${monitorUrl}/varz`)).json()) as { server_id: string };
  const metrics = await (await fetch(`${metricsUrl}/metrics`)).text();
  const metric = /^# HELP (\S+)/m.exec(metrics)?.[1];
  expect(varz.server_id.length).toBeGreaterThan(20);
  expect(metric).toBeDefined();
  return [varz.server_id, `# HELP ${metric}`, '"jetstream"', 'process_cpu'];
}

async function submitAndWait(runId: string, url: string): Promise<RunEvent[]> {
  await createDuraClient(system).submitRun({
    runId,
    agent: { kind: 'scripted', steps: [{ tool: 'http.request', args: { url } }] },
  });
  const store = createEventStore(system);
  return eventually(
    async () => {
      const events = await store.read(runId);
      const last = events.at(-1)?.type;
      expect(['run_completed', 'run_failed', 'run_rejected', 'run_cancelled']).toContain(last);
      return events;
    },
    `run ${runId} to end`,
    90_000,
  );
}

describe('a plan calling http.request at the stack’s internals', () => {
  it.each([
    ['planner-metrics', () => `${metricsUrl}/metrics`, /127\.0\.0\.1 is a loopback address/],
    ['nats-varz', () => `${monitorUrl}/varz`, /127\.0\.0\.1 is a loopback address/],
    [
      'nats-varz-localhost',
      () => `${monitorUrl.replace('127.0.0.1', 'localhost')}/varz`,
      /localhost resolved to/,
    ],
    ['metadata', () => 'http://169.254.169.254/latest/meta-data/iam/', /cloud-metadata address/],
  ])('%s: tool_call_failed egress_denied, and nothing of the body in any event', async (runId, url, says) => {
    const events = await submitAndWait(`hostile-egress-${runId}`, url());
    const failed = events.filter((e) => e.type === 'tool_call_failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.data).toMatchObject({
      error: { code: 'egress_denied', retryable: false, message: expect.stringMatching(says) as unknown },
    });
    expect(JSON.stringify(failed[0]?.data)).toContain('DURA_EGRESS_ALLOW');
    expect(events.map((e) => e.type)).not.toContain('tool_call_completed');

    const api = await eventually(
      async () => {
        const read = await getJson(`${system.apiUrl}/runs/hostile-egress-${runId}/events`);
        expect(read.status).toBe(200);
        expect(JSON.stringify(read.body)).toContain('egress_denied');
        return JSON.stringify(read.body);
      },
      'the run events through the read API',
      30_000,
    );
    const logText = JSON.stringify(events);
    for (const needle of await needles()) {
      expect(logText).not.toContain(needle);
      expect(api).not.toContain(needle);
    }
  });

  it('no message of the run log holds those bodies either', async () => {
    const found = await needles();
    const info = await system.jsm.streams.info('DURA_RUNS');
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
      const msg = await system.jsm.streams.getMessage('DURA_RUNS', { seq }).catch(() => null);
      const text = msg ? Buffer.from(msg.data).toString('utf8') : '';
      for (const needle of found) expect(text).not.toContain(needle);
    }
  });
});

describe('with http.request not enabled', () => {
  it('the tool does not exist: the run is refused before any call is requested', async () => {
    await start('planner', { DURA_HTTP_REQUEST_ENABLED: 'false' });
    await start('tool-gateway', { DURA_HTTP_REQUEST_ENABLED: 'false' });
    const events = await submitAndWait('hostile-egress-disabled', `${monitorUrl}/varz`);
    expect(events.map((e) => e.type)).not.toContain('tool_call_requested');
    expect(events.at(-1)).toMatchObject({
      type: 'run_rejected',
      data: {
        error: { code: 'unknown_tool' },
        issues: [expect.stringMatching(/unknown tool "http\.request"/) as unknown],
      },
    });
  });
});
