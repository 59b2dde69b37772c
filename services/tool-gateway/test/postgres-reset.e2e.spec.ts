// A Postgres restart as a gateway process sees it: every connection of its pool, and its LISTEN connection,
// terminated by the server (pg_terminate_backend, what a restart does to each backend) again and again while
// tool calls run, relay passes publish and outbox marks are written; and, the moment that matters most, a
// connection terminated while it is still being set up (the driver reads the server's array types first
// thing on every new connection). The process must stay up through all of it and every call must end
// with exactly one charge and one observation.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { rowsOf } from '@dura/db';
import {
  repoRoot,
  spawnTsEntry,
  startPaymentWitness,
  useTestInfra,
  type ManagedProcess,
  type PaymentWitness,
} from '@dura/testing';
import { effects } from '../src/index';
import { eventually, prepare, publishTask, runLog, sleep, toolTask, type Connections } from './support';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const WITNESS_TOOLS = `${repoRoot()}/services/dev/test/fixtures/witness-tools.ts`;
/** The gateway's connections say who they are, so the test terminates those and never its own. */
const APP = 'dura-gateway-under-reset';
const CALLS = 40;
const KILLING_MS = 12_000;

let setup: Connections;
let witness: PaymentWitness;
let gateway: ManagedProcess | undefined;

beforeAll(async () => {
  setup = await prepare(infra().nats.url, infra().db.url);
  witness = await startPaymentWitness();
});

afterAll(async () => {
  await Promise.allSettled([gateway?.kill(), witness?.close()]);
  await setup?.close();
});

/** Terminates the gateway's backends: all of them, or only those reading the array types on a new connection. */
async function terminate(which: 'all' | 'starting'): Promise<number> {
  const starting = sql`and state = 'active' and query like '%pg_catalog.pg_type%typarray%'`;
  const result = await setup.db.execute(sql`
    select count(*) filter (where pg_terminate_backend(pid))::int as killed
    from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and application_name = ${APP}
    ${which === 'starting' ? starting : sql``}`);
  return rowsOf<{ killed: number }>(result)[0]?.killed ?? 0;
}

/** Until `until`: every few ms the backends caught setting up, and every ~250 ms all of them. */
async function keepTerminating(until: number): Promise<{ all: number; starting: number }> {
  const killed = { all: 0, starting: 0 };
  let nextAll = Date.now();
  while (Date.now() < until) {
    if (Date.now() >= nextAll) {
      killed.all += await terminate('all');
      nextAll = Date.now() + 150 + Math.floor(Math.random() * 200);
    } else {
      killed.starting += await terminate('starting');
    }
    await sleep(3);
  }
  return killed;
}

describe('a gateway process whose Postgres connections are terminated again and again', () => {
  it('stays up, and every call ends with exactly one charge and one observation', async () => {
    const url = new URL(infra().db.url);
    url.searchParams.set('application_name', APP);
    gateway = spawnTsEntry({
      name: 'gateway-pg-reset',
      entry: 'services/tool-gateway/src/main.ts',
      env: {
        NATS_URL: infra().nats.url,
        DATABASE_URL: url.toString(),
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
        METRICS_PORT: undefined,
        DURA_FAILPOINT: undefined,
        DURA_TOOLS_MODULES: WITNESS_TOOLS,
        WITNESS_URL: witness.url,
        RELAY_POLL_MS: '50',
        // A call interrupted between its claim and its result is re-run once its lease (3 s tool timeout + this)
        // runs out: short, so the test does not wait out the default 30 s.
        GATEWAY_LEASE_MARGIN_MS: '2000',
        GATEWAY_TIMER_POLL_MS: '100',
      },
    });
    await gateway.waitForOutput(/tool gateway started/, 60_000);
    const proc = gateway;
    let exit: string | undefined;
    void proc.exited.then((how) => (exit = `exited ${JSON.stringify(how)}`));

    const tasks = Array.from({ length: CALLS }, (_, i) =>
      toolTask(`run-pg-reset-${i}`, 'pay.charge', { amount: 100 + i }),
    );
    const killing = keepTerminating(Date.now() + KILLING_MS);
    for (const task of tasks) {
      await publishTask(setup, task);
      await sleep(KILLING_MS / CALLS / 2);
    }
    const killed = await killing;
    expect(exit, `the gateway died:\n${proc.output().slice(-4_000)}`).toBeUndefined();
    // The faults really happened: pool and LISTEN connections, and connections caught while setting up.
    expect(killed.all, JSON.stringify(killed)).toBeGreaterThan(20);
    expect(killed.starting, JSON.stringify(killed)).toBeGreaterThan(0);

    const keys = tasks.map((task) => task.idempotencyKey);
    await eventually(
      async () => {
        if (exit) return true;
        const rows = await setup.db
          .select({ key: effects.idempotencyKey })
          .from(effects)
          .where(and(inArray(effects.idempotencyKey, keys), eq(effects.status, 'succeeded')));
        if (rows.length < CALLS) return undefined;
        const logs = await Promise.all(tasks.map((task) => runLog(setup.jsm, task.runId)));
        return logs.every((log) => log.length > 0) ? true : undefined;
      },
      'every call succeeded and its observation is in its run log',
      120_000,
    );
    expect(exit, `the gateway died:\n${proc.output().slice(-4_000)}`).toBeUndefined();

    for (const task of tasks) {
      expect(witness.effects(task.idempotencyKey), task.idempotencyKey).toBe(1);
      const log = await runLog(setup.jsm, task.runId);
      expect(log.map((entry) => entry.event.type)).toEqual(['tool_call_completed']);
    }
    // Still up after the storm, and still serving: one more call goes through at once.
    const after = toolTask('run-pg-reset-after', 'pay.charge', { amount: 7 });
    await publishTask(setup, after);
    await eventually(
      async () => ((await runLog(setup.jsm, after.runId)).length === 1 ? true : undefined),
      'the call after the storm observed',
    );
    expect(witness.effects(after.idempotencyKey)).toBe(1);
    expect(exit, `the gateway died:\n${proc.output().slice(-4_000)}`).toBeUndefined();
  });
});
