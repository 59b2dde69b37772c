import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnTsEntry, useTestInfra } from '@dura/testing';

const infra = useTestInfra({ nats: false });
const clients: postgres.Sql[] = [];

afterAll(async () => {
  await Promise.allSettled(clients.map((sql) => sql.end({ timeout: 5 })));
});

/** Runs a pod's init step, `node --import tsx deploy/image/migrate-<service>.ts`, to its exit. */
async function migrate(service: string, env: Record<string, string | undefined>) {
  const proc = spawnTsEntry({ name: `migrate ${service}`, entry: `deploy/image/migrate-${service}.ts`, env });
  const { code } = await proc.exited;
  return { code, output: proc.output() };
}

async function tables(url: string): Promise<string[]> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  clients.push(sql);
  const rows = await sql<{ name: string }[]>`
    select table_schema || '.' || table_name as name from information_schema.tables
    where table_schema in ('public', 'drizzle') order by 1`;
  return rows.map((row) => row.name);
}

describe('deploy/image/migrate-*.ts (the init containers of the gateway and projector pods)', () => {
  it("applies the tool gateway's and the projector's migrations, and applying them again changes nothing", async () => {
    const env = { DATABASE_URL: infra().db.url };
    for (const service of ['tool-gateway', 'projector', 'tool-gateway']) {
      const run = await migrate(service, env);
      expect(run.output).toContain(`${service}: migrations applied`);
      expect(run.code).toBe(0);
    }
    expect(await tables(infra().db.url)).toEqual(
      expect.arrayContaining([
        'drizzle.__dura_gateway_migrations',
        'drizzle.__dura_projector_migrations',
        'public.effects',
        'public.outbox',
        'public.timers',
        'public.runs',
        'public.run_events',
      ]),
    );
  });

  it('exits 2 naming the variable when DATABASE_URL is missing or wrong, and 1 when Postgres is unreachable', async () => {
    const unset = await migrate('tool-gateway', { DATABASE_URL: undefined });
    expect(unset).toMatchObject({ code: 2, output: expect.stringContaining('DATABASE_URL') });
    const badUrl = await migrate('projector', { DATABASE_URL: 'mysql://db/dura' });
    expect(badUrl).toMatchObject({
      code: 2,
      output: expect.stringContaining('DATABASE_URL: must be a Postgres URL'),
    });
    const down = await migrate('projector', { DATABASE_URL: 'postgres://dura:secret@127.0.0.1:1/dura' });
    expect(down.code).toBe(1);
    expect(down.output).toContain('check DATABASE_URL');
    expect(down.output).not.toContain('secret');
  });
});
