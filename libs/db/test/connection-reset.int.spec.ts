// A Postgres restart reaches a pool as its connections dropping, often while a new one is still setting
// itself up: postgres.js reads the server's array types first thing on every new connection. A connection
// terminated then must fail (or retry) the query that opened it, and nothing else: no unhandled rejection,
// which would exit a service's process (scripts/patch-postgres.mjs).
//
// A query handed to a connection between its socket's error and its close used to stay pending for good
// (postgres.js 3.4.9 failed what was left in `sent` only on a close without an error); this failed about one
// run in three before the third patch of scripts/patch-postgres.mjs. Waiting out the pool's reconnect
// backoff (up to 20 s after many failed connections) is part of the last query's time.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabaseHandle } from '@dura/testing';
import { openDatabase, rowsOf, type DbHandle } from '../src/index';

const APP = 'dura-db-reset';
const TERMINATING_MS = 4_000;

let database: TestDatabaseHandle;
let handle: DbHandle | undefined;
let killer: DbHandle | undefined;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

beforeAll(async () => {
  database = await createTestDatabase({ prefix: 'db_reset' });
  process.on('unhandledRejection', onUnhandled);
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await Promise.allSettled([handle?.close(), killer?.close()]);
  await database.drop();
});

/** Terminates the pool's backends: all of them, or those still reading the array types of a new connection. */
async function terminate(db: DbHandle['db'], which: 'all' | 'starting'): Promise<number> {
  const starting = sql`and state = 'active' and query like '%pg_catalog.pg_type%typarray%'`;
  const result = await db.execute(sql`
    select count(*) filter (where pg_terminate_backend(pid))::int as killed
    from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and application_name = ${APP}
    ${which === 'starting' ? starting : sql``}`);
  return rowsOf<{ killed: number }>(result)[0]?.killed ?? 0;
}

describe('a Postgres handle whose connections are terminated while they set up', () => {
  it(
    'fails or retries its queries, never leaves a rejection unhandled, and answers once left alone',
    { timeout: 90_000 },
    async () => {
      const url = new URL(database.url);
      url.searchParams.set('application_name', APP);
      handle = await openDatabase({ url: url.toString(), maxConnections: 4 });
      killer = await openDatabase({ url: database.url, maxConnections: 1 });
      const { db } = handle;
      const until = Date.now() + TERMINATING_MS;
      const outcomes = { ok: 0, failed: 0 };
      // Four clients keep the pool busy, so terminated connections are reopened at once.
      const clients = Array.from({ length: 4 }, async () => {
        while (Date.now() < until) {
          await db.execute(sql`select 1`).then(
            () => (outcomes.ok += 1),
            () => (outcomes.failed += 1),
          );
        }
      });
      const killed = { all: 0, starting: 0 };
      for (let next = Date.now(); Date.now() < until;) {
        if (Date.now() >= next) {
          killed.all += await terminate(killer.db, 'all');
          next = Date.now() + 100;
        } else {
          killed.starting += await terminate(killer.db, 'starting');
        }
      }
      await Promise.all(clients);

      expect(killed.starting, JSON.stringify({ killed, outcomes })).toBeGreaterThan(0);
      expect(outcomes.failed, JSON.stringify({ killed, outcomes })).toBeGreaterThan(0);
      expect(unhandled.map((reason) => String(reason))).toEqual([]);
      const [row] = rowsOf<{ n: number }>(await db.execute(sql`select 41 + 1 as n`));
      expect(row?.n).toBe(42);
    },
  );
});
