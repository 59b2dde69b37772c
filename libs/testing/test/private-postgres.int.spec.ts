import { existsSync } from 'node:fs';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivatePostgres, type PrivatePostgresHandle } from '../src/index';

let pg: PrivatePostgresHandle;
let sql: postgres.Sql;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  sql = postgres(pg.url, { max: 2, onnotice: () => undefined, backoff: () => 0.1 });
}, 60_000);

afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await pg?.[Symbol.asyncDispose]();
});

describe('a private Postgres server', () => {
  it('accepts connections with trust auth on its own port', async () => {
    expect(pg.url).toBe(`postgres://postgres@127.0.0.1:${pg.port}/postgres`);
    await sql`create table kept (n int)`;
    await sql`insert into kept values (1)`;
    const [row] = await sql<{ n: number }[]>`select n from kept`;
    expect(row?.n).toBe(1);
  });

  it('loses no committed row to kill() and comes back on the same port with restart()', async () => {
    await sql`insert into kept values (2)`;
    await pg.kill();
    await expect(sql`select 1`).rejects.toThrow();
    await pg.restart();
    const rows = await sql<{ n: number }[]>`select n from kept order by n`;
    expect(rows.map((row) => row.n)).toEqual([1, 2]);
    expect(pg.output()).toMatch(/not properly shut down; automatic recovery in progress/);
  });

  it('stops and starts again cleanly', async () => {
    await pg.stop();
    await pg.restart();
    const [row] = await sql<{ count: string }[]>`select count(*) from kept`;
    expect(Number(row?.count)).toBe(2);
  });

  it('removes its directory when disposed', async () => {
    const other = await startPrivatePostgres();
    expect(other.port).not.toBe(pg.port);
    expect(existsSync(other.dataDir)).toBe(true);
    await other[Symbol.asyncDispose]();
    expect(existsSync(other.dataDir)).toBe(false);
  });
});
