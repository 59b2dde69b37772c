import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { DuraError } from '@dura/contracts';
import { redact } from './connect-error';
import { reconnectBackoff } from './listen';
import {
  DEFAULT_ANSWER_TIMEOUT_MS,
  DEFAULT_MIGRATION_LOCK_WAIT_MS,
  MIGRATIONS_TIMEOUT_MS,
  seconds,
  withinDeadline,
  type StartBounds,
} from './start-bounds';

const LOCK_POLL_MS = 500;
/** How often a wait for the lock is said again (the first time at once). */
const SAY_EVERY_MS = 5_000;

interface LockHolder {
  pid: number;
  application_name: string | null;
  client: string | null;
  state: string | null;
  since: Date | null;
}

/**
 * Applies the migrations in `folder` (recorded in `table`) once, even when several replicas start together:
 * under an advisory lock taken with a try-lock loop that says whose lock it waits for and gives up after
 * `migrationLockWaitMs`, every query bounded by `answerTimeoutMs` and the migrations as a whole by 5 min.
 */
export async function migratePostgres(
  url: string,
  { folder, table }: { folder: string; table: string },
  bounds: StartBounds,
): Promise<void> {
  const answerMs = bounds.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS;
  // One connection, so the advisory lock and the migration share a session. lock_timeout: a migration
  // statement queued behind a table lock fails (and is retried) rather than wait unseen, holding up the
  // queries queued behind it.
  const single = postgres(url, {
    max: 1,
    onnotice: () => undefined,
    connect_timeout: 10,
    backoff: reconnectBackoff,
    connection: { lock_timeout: answerMs },
  });
  const shown = redact(url);
  const bounded = <T>(work: Promise<T>, what: string): Promise<T> =>
    withinDeadline(
      work,
      answerMs,
      () =>
        new DuraError(
          'database_unreachable',
          `Postgres at ${shown} did not answer ${what} within ${seconds(answerMs)}; check that the server is ` +
            'up and not stalled (its disk, a crash recovery, too many connections)',
          { retryable: true },
        ),
      () => single.end({ timeout: 0 }),
    );
  try {
    await takeLock(single, table, bounds, bounded);
    await withinDeadline(
      migrate(drizzle(single), { migrationsFolder: folder, migrationsTable: table }),
      MIGRATIONS_TIMEOUT_MS,
      () =>
        new DuraError(
          'database_unreachable',
          `applying the migrations in ${folder} to Postgres at ${shown} took more than ` +
            `${seconds(MIGRATIONS_TIMEOUT_MS)}; check the server's load and pg_stat_activity for what they wait on`,
          { retryable: true },
        ),
      () => single.end({ timeout: 0 }),
    ).catch((err: unknown) => {
      throw migrationError(err, folder, shown);
    });
    await bounded(single`select pg_advisory_unlock(hashtext(${table}))`, 'the release of the migration lock');
  } catch (err) {
    throw err instanceof DuraError ? err : migrationError(err, folder, shown);
  } finally {
    // Ending the session releases the lock too, whatever happened.
    await single.end({ timeout: 5 }).catch(() => undefined);
  }
}

async function takeLock(
  single: postgres.Sql,
  table: string,
  bounds: StartBounds,
  bounded: <T>(work: Promise<T>, what: string) => Promise<T>,
): Promise<void> {
  const limitMs = bounds.migrationLockWaitMs ?? DEFAULT_MIGRATION_LOCK_WAIT_MS;
  const started = Date.now();
  let saidAt: number | undefined;
  for (;;) {
    const [row] = await bounded(
      single<{ locked: boolean }[]>`select pg_try_advisory_lock(hashtext(${table})) as locked`,
      'a try for the migration lock',
    );
    if (row?.locked) return;
    const [holder] = await bounded(
      // A bigint advisory key is stored split: its high half in classid, its low half in objid.
      single<LockHolder[]>`
        select a.pid, a.application_name, a.client_addr::text as client, a.state, a.backend_start as since
        from pg_locks l join pg_stat_activity a on a.pid = l.pid
        where l.locktype = 'advisory' and l.granted and l.objsubid = 1
          and l.database = (select oid from pg_database where datname = current_database())
          and ((l.classid::bigint << 32) | l.objid::bigint) = hashtext(${table})::bigint
        limit 1`,
      'who holds the migration lock',
    );
    const waited = Date.now() - started;
    const who = holder ? describeHolder(holder) : 'a session that just ended';
    if (waited >= limitMs)
      throw new DuraError(
        'migration_lock_timeout',
        `the migration lock (${table}) has been held by ${who} for more than ${seconds(limitMs)}: another ` +
          'replica still applying the migrations, or a session stuck (or dead and not yet noticed by Postgres). ' +
          (holder
            ? `Check it in pg_stat_activity; if it is stuck, end it with select pg_terminate_backend(${holder.pid}), `
            : 'Check pg_locks for it, ') +
          'then start the service again',
      );
    if (saidAt === undefined || Date.now() - saidAt >= SAY_EVERY_MS) {
      saidAt = Date.now();
      bounds.onWaiting?.(
        `waiting for the migration lock (${table}) held by ${who}; ${seconds(waited)} so far, ` +
          `giving up after ${seconds(limitMs)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(LOCK_POLL_MS, limitMs - waited)));
  }
}

function describeHolder(holder: LockHolder): string {
  const app = holder.application_name ? `application '${holder.application_name}'` : 'no application name';
  const from = holder.client ? ` from ${holder.client}` : '';
  const since = holder.since ? `, connected since ${new Date(holder.since).toISOString()}` : '';
  return `pid ${holder.pid} (${app}${from}, ${holder.state ?? 'state unknown'}${since})`;
}

/** A failed migration: the connection lost or a table lock not granted may pass (retryable); a bad migration will not. */
function migrationError(err: unknown, folder: string, shown: string): DuraError {
  if (err instanceof DuraError) return err;
  const message = (err as Error).message;
  const raw = (err as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : '';
  if (code === '55P03')
    return new DuraError(
      'migration_blocked',
      `a migration in ${folder} waited too long for a table lock another session holds (${message}); ` +
        'look in pg_locks for the blocking session (a long transaction); the service retries',
      { retryable: true, cause: err },
    );
  // SQLSTATE classes 08 (connection) and 57 (server shut down or restarting); postgres.js's own CONNECTION_*
  // and CONNECT_TIMEOUT; Node's socket errors (ECONNREFUSED, ECONNRESET, ...).
  if (/^(08|57|CONNECT|E[A-Z]+$)/.test(code))
    return new DuraError(
      'database_unreachable',
      `lost Postgres at ${shown} while applying the migrations in ${folder} (${message}); ` +
        'check that the server is up; the service retries',
      { retryable: true, cause: err },
    );
  return new DuraError(
    'migration_failed',
    `applying the migrations in ${folder} failed (${code ? `${code}: ` : ''}${message}); fix the migration or ` +
      'the database it runs on, then start the service again',
    { cause: err },
  );
}
