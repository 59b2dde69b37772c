// Drizzle runs its queries unprepared, which postgres.js turns into two round trips per statement with
// parameters (describe, then bind). The handle runs them prepared: one round trip once a connection knows
// the statement. The server's own view of the session says which it was.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabaseHandle } from '@dura/testing';
import { openDatabase, rowsOf, type DbHandle } from '../src/index';

let database: TestDatabaseHandle;
const handles: DbHandle[] = [];

beforeAll(async () => {
  database = await createTestDatabase({ prefix: 'db_prepared' });
});

afterAll(async () => {
  await Promise.allSettled(handles.map((handle) => handle.close()));
  await database.drop();
});

async function open(url: string): Promise<DbHandle> {
  const handle = await openDatabase({ url, maxConnections: 1 });
  handles.push(handle);
  return handle;
}

async function preparedHere(handle: DbHandle, marker: string): Promise<number> {
  const [row] = rowsOf<{ n: number }>(
    await handle.db.execute(
      sql`select count(*)::int as n from pg_prepared_statements where statement like ${`%${marker}%`}`,
    ),
  );
  return row?.n ?? -1;
}

describe('a Postgres handle', () => {
  it('runs drizzle queries with parameters as prepared statements, in and out of transactions', async () => {
    const handle = await open(database.url);
    const { db } = handle;
    for (let i = 0; i < 3; i += 1) await db.execute(sql`select ${i}::int as outside_marker`);
    await db.transaction(async (tx) => {
      await tx.execute(sql`select ${1}::int as inside_marker`);
    });

    expect(await preparedHere(handle, 'outside_marker')).toBe(1);
    expect(await preparedHere(handle, 'inside_marker')).toBe(1);
  });

  it('runs them unprepared when the URL says prepare=false (for a pooler in transaction mode)', async () => {
    const separator = database.url.includes('?') ? '&' : '?';
    const handle = await open(`${database.url}${separator}prepare=false`);
    await handle.db.execute(sql`select ${1}::int as unprepared_marker`);

    expect(await preparedHere(handle, 'unprepared_marker')).toBe(0);
  });
});
