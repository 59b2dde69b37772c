// Two scheduler replicas started at the same moment on one NATS, a schedule written to on every tick: each
// replica keeps passing, and decides a fair share of the ticks.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createScheduleStore } from '@dura/event-store';
import { useTestInfra } from '@dura/testing';
import { createScheduler, type Scheduler } from '../src/scheduler';
import { connect, eventually, prepare, type Connections } from './support';
import { recordingLogger } from './snapshot-support';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
let setup: Connections;
const replicas: { conn: Connections; scheduler: Scheduler; decided: () => number }[] = [];

// Ten schedule seconds pass per real second: the schedule ticks every 100 ms, a replica passes every 30 ms.
const SPEED = 10;
const origin = Date.now();
const clock = () => new Date(origin + (Date.now() - origin) * SPEED);

beforeAll(async () => {
  setup = await prepare(infra().nats.url);
  await createScheduleStore({ js: setup.js }).create(
    {
      id: 'fair_share',
      tenant: 'acme',
      everyMs: 1000,
      overlap: 'allow_all',
      request: { v: 1, agent: { kind: 'scripted', steps: [] } },
    },
    clock().getTime(),
  );
  for (const name of ['replica-a', 'replica-b']) {
    const conn = await connect(infra().nats.url, name);
    const { log, records } = recordingLogger();
    const scheduler = createScheduler({
      js: conn.js,
      log,
      clock,
      runOf: () => Promise.resolve({ status: 'none', tenant: 'acme', schedule: undefined }),
      pollMs: 30,
    });
    const decided = () => records.filter((r) => r['msg'] === 'schedule ticks decided').length;
    replicas.push({ conn, scheduler, decided });
  }
  for (const replica of replicas) replica.scheduler.start();
});

afterAll(async () => {
  for (const { scheduler, conn } of replicas) {
    await scheduler.stop();
    await conn.close();
  }
  await setup?.close();
});

describe('two scheduler replicas started together', () => {
  it('each decides at least a fifth of 100 decisions', async () => {
    const shares = () => replicas.map((r) => r.decided());
    const total = () => shares().reduce((sum, n) => sum + n, 0);
    await eventually(() => Promise.resolve(total() >= 100 ? true : undefined), '100 decisions', 60_000);
    // Binomial(100, ½) below 20 has a chance of about 1 in 10⁹.
    expect(Math.min(...shares()), `decisions per replica: ${shares().join(' / ')}`).toBeGreaterThanOrEqual(
      20,
    );
  });
});
