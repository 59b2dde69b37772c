// `npm run cluster -- --once FILE`: the whole multi-replica system starts from one command, runs the example
// to completion, and leaves nothing behind (its fresh database dropped, every process gone).
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { spawnTsEntry } from '@dura/testing';

const ADMIN_URL = process.env['DURA_TEST_PG_ADMIN_URL'] || 'postgres://postgres@127.0.0.1:5432/postgres';

async function databaseExists(name: string): Promise<boolean> {
  const sql = postgres(ADMIN_URL, { max: 1, onnotice: () => undefined });
  try {
    const rows = await sql`SELECT 1 FROM pg_database WHERE datname = ${name}`;
    return rows.length > 0;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm run cluster -- --once', () => {
  it('starts NATS ×3, the replicas, runs the example to completion, and cleans up', async () => {
    const proc = spawnTsEntry({
      name: 'cluster-main',
      entry: 'services/dev/src/cluster-main.ts',
      args: ['--planners', '2', '--gateways', '2', '--once', 'examples/deploy-pipeline.json'],
      env: { DATABASE_URL: ADMIN_URL, DURA_CLUSTER_DIR: undefined },
    });
    try {
      const exit = await proc.exited;
      const output = proc.output();
      expect(exit.code, output.slice(-4000)).toBe(0);
      expect(output).toMatch(
        /nats {6}nats:\/\/127\.0\.0\.1:\d+,nats:\/\/127\.0\.0\.1:\d+,nats:\/\/127\.0\.0\.1:\d+/,
      );
      for (const label of ['projector-1', 'gateway-1', 'gateway-2', 'planner-1', 'planner-2'])
        expect(output).toMatch(new RegExp(`${label} +pid \\d+, ready in \\d+ ms`));
      expect(output).toMatch(/#\s*\d+\s+run_completed/);
      expect(output).toMatch(/: run_completed\. State: http:\/\/127\.0\.0\.1:\d+\/runs\//);

      const database = /postgres {2}\S+\/(dura_cluster_\w+) \(new\)/.exec(output)?.[1];
      expect(database, 'the fresh database is named in the output').toBeDefined();
      expect(await databaseExists(database as string), `${database} is dropped on exit`).toBe(false);
      expect(output).toContain('stopped.');
      const pids = [...output.matchAll(/ pid (\d+), ready/g)].map((m) => Number(m[1]));
      expect(pids).toHaveLength(5);
      expect(pids.filter(isAlive), 'replica processes still running').toEqual([]);
    } finally {
      await proc.kill('SIGKILL');
    }
  });
});
