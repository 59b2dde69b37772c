// A service's start-up must never wait silently forever on Postgres: a server that accepts the connection and
// then stops answering, or a migration lock another session holds, is waited for within a bound, said while
// it is waited for, and ends in a clear error when the bound passes.
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuraError } from '@dura/contracts';
import { createTestDatabase, eventually, type TestDatabaseHandle } from '@dura/testing';
import { openDatabase, rowsOf, type DbHandle } from '../src/index';
import { sql } from 'drizzle-orm';

const FOLDER = fileURLToPath(new URL('./fixtures/migrations', import.meta.url));
const TABLE = '__dura_start_bounds_migrations';
/** Far past every bound the tests set: reaching it means the start-up waited with no bound. */
const NO_BOUND_MS = 30_000;

let database: TestDatabaseHandle;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  database = await createTestDatabase({ prefix: 'db_start_bounds' });
});

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await database.drop();
});

/** What `work` settled with, or 'still waiting' when it has not within NO_BOUND_MS. */
async function outcomeOf(work: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting'), NO_BOUND_MS)));
  try {
    return await Promise.race([
      work.then(
        () => 'done',
        (err: unknown) => err,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A TCP proxy to the test's Postgres that passes the connection's set-up through (up to the server's first
 * ReadyForQuery) and then swallows everything the client sends: a server that stopped answering.
 */
async function stallingProxy(target: URL): Promise<URL> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let stalled = false;
    let pending = Buffer.alloc(0);
    client.on('data', (chunk) => void (stalled || upstream.write(chunk)));
    upstream.on('data', (chunk) => {
      if (stalled) return;
      pending = Buffer.concat([pending, chunk]);
      // Server messages are a type byte and a 4-byte length (which counts itself).
      while (pending.length >= 5 && pending.length >= 1 + pending.readUInt32BE(1)) {
        const size = 1 + pending.readUInt32BE(1);
        client.write(pending.subarray(0, size));
        if (pending[0] === 0x5a) stalled = true; // 'Z': set up, ready for queries
        pending = pending.subarray(size);
        if (stalled) return;
      }
    });
    for (const socket of [client, upstream]) socket.on('error', () => undefined);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return url;
}

describe('opening Postgres at start-up', () => {
  it('gives up on a server that accepts the connection and then never answers, saying so', async () => {
    const url = await stallingProxy(new URL(database.url));
    const started = Date.now();
    const outcome = await outcomeOf(openDatabase({ url: url.toString(), start: { answerTimeoutMs: 2_000 } }));
    expect(outcome).toBeInstanceOf(DuraError);
    const err = outcome as DuraError;
    expect(err.code).toBe('database_unreachable');
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/did not answer a first query within 2 s/);
    expect(err.message).toMatch(/check/);
    expect(Date.now() - started).toBeLessThan(NO_BOUND_MS);
  });
});

describe('migrating at start-up while another session holds the migration lock', () => {
  async function holdLock(): Promise<{ pid: number; release: () => Promise<void> }> {
    const holder = postgres(database.url, { max: 1, onnotice: () => undefined });
    closers.push(() => holder.end({ timeout: 1 }));
    const [row] = await holder<{ pid: number }[]>`
      select pg_backend_pid() as pid, pg_advisory_lock(hashtext(${TABLE})) is not null as locked`;
    return {
      pid: row!.pid,
      release: async () => void (await holder`select pg_advisory_unlock(hashtext(${TABLE}))`),
    };
  }

  async function open(start: { migrationLockWaitMs?: number; onWaiting: (reason: string) => void }) {
    const handle: DbHandle = await openDatabase({ url: database.url, start });
    closers.push(() => handle.close());
    return handle;
  }

  it('says whose lock it waits for, and migrates once the holder lets go', async () => {
    const lock = await holdLock();
    const reasons: string[] = [];
    const handle = await open({ onWaiting: (reason) => reasons.push(reason) });
    let migrated = false;
    const migrating = handle.migrate({ folder: FOLDER, table: TABLE }).then(() => (migrated = true));
    const said = new RegExp(`waiting for the migration lock .*held by pid ${lock.pid}`);
    await eventually(
      () => Promise.resolve(reasons.some((reason) => said.test(reason)) || undefined),
      `a wait naming the lock's holder (said so far: ${JSON.stringify(reasons)})`,
    );
    expect(migrated).toBe(false);
    await lock.release();
    expect(await outcomeOf(migrating)).toBe('done');
    const rows = rowsOf<{ n: number }>(await handle.db.execute(sql`select count(*)::int as n from widgets`));
    expect(rows[0]?.n).toBe(0);
  });

  it('fails with a clear error naming the holder when the lock is not released within the bound', async () => {
    const lock = await holdLock();
    const reasons: string[] = [];
    const handle = await open({ migrationLockWaitMs: 1_500, onWaiting: (reason) => reasons.push(reason) });
    const outcome = await outcomeOf(handle.migrate({ folder: FOLDER, table: TABLE }));
    await lock.release();
    expect(outcome).toBeInstanceOf(DuraError);
    const err = outcome as DuraError;
    expect(err.code).toBe('migration_lock_timeout');
    expect(err.message).toContain(`pid ${lock.pid}`);
    expect(err.message).toContain(`pg_terminate_backend(${lock.pid})`);
    expect(reasons.join('\n')).toContain(`held by pid ${lock.pid}`);
  });
});
