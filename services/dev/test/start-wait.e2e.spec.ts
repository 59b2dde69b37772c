import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createTestDatabase,
  eventually,
  freePort,
  spawnTsEntry,
  startNatsCluster,
  startNatsServer,
  startPrivatePostgres,
  type ManagedProcess,
  type NatsServerHandle,
  type PrivatePostgresHandle,
  type TestDatabaseHandle,
} from '@dura/testing';

// Sized for a loaded 2-core machine: a start attempt backs off up to 10 s, a tsx start takes several.
const READY_MS = 90_000;

const owned: { stop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const handle of owned.reverse()) await handle.stop().catch(() => undefined);
});

function service(
  name: 'planner' | 'tool-gateway' | 'projector',
  env: Record<string, string>,
): ManagedProcess {
  const proc = spawnTsEntry({
    name,
    entry: `services/${name}/src/main.ts`,
    env: { LOG_LEVEL: 'info', ...env },
  });
  owned.push({ stop: () => proc.kill('SIGKILL') });
  return proc;
}

async function readyz(url: string): Promise<{ status: number; body: { ready?: boolean; reason?: string } }> {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, body: (await response.json()) as { ready?: boolean; reason?: string } };
}

/** Waits until `/readyz` answers 503 with a reason matching `reason`. */
function notReady(url: string, reason: RegExp, proc: ManagedProcess) {
  return eventually(
    async () => {
      const answer = await readyz(url);
      return answer.status === 503 && reason.test(answer.body.reason ?? '') ? answer : undefined;
    },
    `${url}/readyz not ready (${reason}); output:\n${proc.output()}`,
    READY_MS,
  );
}

function ready(url: string, proc: ManagedProcess) {
  return eventually(
    async () => ((await readyz(url)).status === 200 ? true : undefined),
    `${url}/readyz ready; output:\n${proc.output()}`,
    READY_MS,
  );
}

async function natsOn(port: number): Promise<NatsServerHandle> {
  const nats = await startNatsServer({ port });
  owned.push({ stop: () => nats.stop() });
  return nats;
}

describe('services started before their dependencies', () => {
  it('the planner waits for NATS with backoff, not ready meanwhile, and becomes ready once a server starts on that port', async () => {
    const natsPort = await freePort();
    const metricsPort = await freePort();
    const proc = service('planner', {
      NATS_URL: `nats://127.0.0.1:${natsPort}`,
      METRICS_PORT: String(metricsPort),
    });
    const url = `http://127.0.0.1:${metricsPort}`;

    await notReady(
      url,
      /waiting for NATS at nats:\/\/127\.0\.0\.1:\d+ \(attempt \d+ failed: cannot connect/,
      proc,
    );
    await proc.waitForOutput(
      /"msg":"waiting for NATS at [^"]+; retrying","attempt":2,"retryInMs":1000,"code":"nats_unreachable"/,
      READY_MS,
    );
    expect(await Promise.race([proc.exited, Promise.resolve('running')])).toBe('running');

    await natsOn(natsPort);
    await ready(url, proc);
    await proc.waitForOutput(/planner started/, READY_MS);
  });

  it('the projector listens at once, answers 503 starting while NATS is down, then serves the API', async () => {
    await using db: TestDatabaseHandle = await createTestDatabase({ prefix: 'start_wait' });
    const natsPort = await freePort();
    const apiPort = await freePort();
    const proc = service('projector', {
      NATS_URL: `nats://127.0.0.1:${natsPort}`,
      DATABASE_URL: db.url,
      PROJECTOR_HTTP_PORT: String(apiPort),
    });
    const url = `http://127.0.0.1:${apiPort}`;

    await notReady(url, /waiting for NATS/, proc);
    const runs = await fetch(`${url}/runs`);
    expect(runs.status).toBe(503);
    expect(runs.headers.get('retry-after')).toBe('5');
    expect(await runs.json()).toMatchObject({ error: { code: 'starting' } });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    await natsOn(natsPort);
    await ready(url, proc);
    await proc.waitForOutput(/projector api listening/, READY_MS);
    expect((await fetch(`${url}/runs`)).status).toBe(200);
  });

  it('the projector waits while the NATS cluster has no JetStream quorum, then places its R3 streams once it forms', async () => {
    await using db: TestDatabaseHandle = await createTestDatabase({ prefix: 'start_wait_cluster' });
    const cluster = await startNatsCluster({ nodes: 3 });
    owned.push(cluster);
    // Two of three nodes down: the one left has no meta leader, so JetStream cannot answer or place anything,
    // as in a cluster whose servers are still starting.
    await cluster.kill(1);
    await cluster.kill(2);
    const apiPort = await freePort();
    const proc = service('projector', {
      NATS_URL: cluster.servers,
      DATABASE_URL: db.url,
      PROJECTOR_HTTP_PORT: String(apiPort),
      DURA_STREAM_REPLICAS: '3',
    });
    const url = `http://127.0.0.1:${apiPort}`;

    await notReady(
      url,
      /waiting for (NATS at .*JetStream is not ready|JetStream to place the streams)/,
      proc,
    );
    expect(await Promise.race([proc.exited, Promise.resolve('running')])).toBe('running');

    await Promise.all([cluster.restart(1), cluster.restart(2)]);
    await ready(url, proc);
    await proc.waitForOutput(/projector api listening/, READY_MS);
    expect(proc.output()).not.toMatch(/failed to start/);
  });

  it('the tool gateway waits for Postgres, not ready meanwhile, and becomes ready once Postgres starts on that port', async () => {
    const nats = await startNatsServer();
    owned.push({ stop: () => nats.stop() });
    const pgPort = await freePort();
    const metricsPort = await freePort();
    const proc = service('tool-gateway', {
      NATS_URL: nats.url,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${pgPort}/postgres`,
      METRICS_PORT: String(metricsPort),
    });
    const url = `http://127.0.0.1:${metricsPort}`;

    await notReady(url, /waiting for Postgres \(attempt \d+ failed: cannot connect to Postgres/, proc);
    const postgres: PrivatePostgresHandle = await startPrivatePostgres({ port: pgPort });
    owned.push({ stop: () => postgres[Symbol.asyncDispose]() });
    await ready(url, proc);
    await proc.waitForOutput(/Postgres reachable/, READY_MS);
  });

  it('the projector waits for the migration lock another session holds, naming it, then migrates and serves', async () => {
    await using db: TestDatabaseHandle = await createTestDatabase({ prefix: 'start_wait_lock' });
    const nats = await startNatsServer();
    owned.push({ stop: () => nats.stop() });
    // A session holding the lock the projector's migrations take: another replica migrating, or a stuck one.
    const holder = postgres(db.url, { max: 1, onnotice: () => undefined });
    owned.push({ stop: () => holder.end({ timeout: 1 }) });
    const [held] = await holder<{ pid: number }[]>`
      select pg_backend_pid() as pid, pg_advisory_lock(hashtext('__dura_projector_migrations')) is not null as locked`;
    const apiPort = await freePort();
    const proc = service('projector', {
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      PROJECTOR_HTTP_PORT: String(apiPort),
    });
    const url = `http://127.0.0.1:${apiPort}`;

    const waiting = new RegExp(
      `waiting for the migration lock \\(__dura_projector_migrations\\) held by pid ${held!.pid} `,
    );
    await notReady(url, waiting, proc);
    await proc.waitForOutput(new RegExp(`"level":"warn".*${waiting.source}`), READY_MS);
    expect(await Promise.race([proc.exited, Promise.resolve('running')])).toBe('running');

    await holder`select pg_advisory_unlock(hashtext('__dura_projector_migrations'))`;
    await ready(url, proc);
    await proc.waitForOutput(/projector api listening/, READY_MS);
  });

  it('a service still waiting is stopped at once by SIGTERM, exit 0', async () => {
    const proc = service('planner', { NATS_URL: `nats://127.0.0.1:${await freePort()}` });
    await proc.waitForOutput(/waiting for NATS/, READY_MS);
    const asked = Date.now();
    await proc.kill('SIGTERM');
    expect((await proc.exited).code).toBe(0);
    // kill() escalates to SIGKILL after 5 s: well under that means the SIGTERM itself ended it.
    expect(Date.now() - asked).toBeLessThan(4_000);
    expect(proc.output()).toMatch(/SIGTERM received while starting; exiting/);
  });

  it('bad NATS credentials or a missing database still stop the start at once, with exit code 1', async () => {
    const nats = await startNatsServer({ extraArgs: ['--user', 'planner', '--pass', 'right'] });
    owned.push({ stop: () => nats.stop() });
    const planner = service('planner', { NATS_URL: nats.url, NATS_USER: 'planner', NATS_PASSWORD: 'wrong' });
    expect((await planner.exited).code).toBe(1);
    expect(planner.output()).toMatch(/nats_auth_failed/);
    expect(planner.output()).not.toMatch(/waiting for NATS/);

    const gateway = service('tool-gateway', {
      NATS_URL: nats.url,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/dura_no_such_database',
    });
    expect((await gateway.exited).code).toBe(1);
    expect(gateway.output()).toMatch(/database_missing: Postgres at .* has no such database/);
  });
});
