import postgres from 'postgres';
import type { TestDatabaseHandle } from './test-database-handle';

const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

function adminUrl(): string {
  return process.env['DURA_TEST_PG_ADMIN_URL'] || DEFAULT_ADMIN_URL;
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Runs one statement on a short-lived admin connection (CREATE/DROP DATABASE cannot run in a transaction). */
async function asAdmin(url: string, run: (sql: postgres.Sql) => Promise<unknown>): Promise<void> {
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => undefined });
  try {
    await run(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function unreachable(url: string, cause: unknown): Error {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new Error(
    `Could not create a test database through ${redact(url)}: ${reason}. ` +
      'Is Postgres running and does this role have CREATEDB? Start it with ' +
      '`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` (or run `bash .ci/run`, ' +
      'which installs and starts it), or point DURA_TEST_PG_ADMIN_URL at a server that works; ' +
      'with Docker available, DURA_TEST_INFRA=containers starts Postgres in a container.',
    { cause },
  );
}

export async function createLocalDatabase(name: string): Promise<TestDatabaseHandle> {
  const admin = adminUrl();
  try {
    await asAdmin(admin, (sql) => sql`CREATE DATABASE ${sql(name)}`);
  } catch (error) {
    throw unreachable(admin, error);
  }
  let dropped: Promise<void> | undefined;
  const drop = () => {
    dropped ??= asAdmin(admin, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`);
    return dropped;
  };
  return { url: withDatabase(admin, name), name, drop, [Symbol.asyncDispose]: drop };
}
