// The bench's CPU window on a real Postgres: connections that open, work and close within the window are
// counted (through the postmaster's reaped-children times), which a count over the processes alive at both
// ends of the window misses.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, eventually, type TestDatabaseHandle } from '@dura/testing';
import { localPostmaster, openCpuWindow } from '../src/cpu-window';
import { procSample } from '../src/proc-stats';

const CONNECTIONS = 4;

describe('bench CPU window', () => {
  let db: TestDatabaseHandle;
  let sql: postgres.Sql;

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'bench_cpu' });
    sql = postgres(db.url, { max: 1, onnotice: () => undefined });
  });

  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await db?.drop();
  });

  it('counts the CPU of Postgres backends that started and ended within the window', async () => {
    const [self] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const postmaster = localPostmaster(self?.pid ?? 0, db.name);
    expect(postmaster, 'the test Postgres runs on this machine').toBeDefined();
    const window = openCpuWindow([], { postmaster: postmaster as number, database: db.name });

    // Each connection opens within the window, burns CPU in its backend, and closes before the window does.
    let backendTicks = 0;
    const backends: number[] = [];
    for (let i = 0; i < CONNECTIONS; i += 1) {
      const conn = postgres(db.url, { max: 1, onnotice: () => undefined });
      const [row] = await conn<{ pid: number }[]>`
        select pg_backend_pid() as pid, count(*) from generate_series(1, 2000000)`;
      const pid = row?.pid as number;
      const sample = procSample(pid);
      expect(sample?.ppid).toBe(postmaster);
      // What the backend has spent so far: a lower bound of what it hands to the postmaster when it ends.
      backendTicks += sample?.selfTicks ?? 0;
      backends.push(pid);
      await conn.end({ timeout: 5 });
      // Reaped by the postmaster (gone from /proc, or its pid taken by another process).
      await eventually(
        () => Promise.resolve(procSample(pid)?.startTicks === sample?.startTicks ? undefined : true),
        `backend ${pid} to end after its connection closed`,
        30_000,
      );
    }
    const result = window.close();

    expect(backendTicks).toBeGreaterThan(0);
    const pg = result.postgres;
    const group = result.groups['postgres'];
    expect(pg).toBeDefined();
    expect(group).toBeDefined();
    // Every one of those backends is counted: none was alive at the end, so all of it came through the
    // postmaster's reaped-children times (other tenants of a shared server can only add to them).
    expect(Math.round((group?.reapedCpuSeconds ?? 0) * 100)).toBeGreaterThanOrEqual(backendTicks);
    expect(Math.round((pg?.serverCpuSeconds ?? 0) * 100)).toBeGreaterThanOrEqual(backendTicks);
    // They served this deployment's database, so they stay in the attributed figure.
    expect(Math.round((group?.cpuSeconds ?? 0) * 100)).toBeGreaterThanOrEqual(backendTicks);
    expect(backends.every((pid) => pid !== self?.pid)).toBe(true);
  });
});
