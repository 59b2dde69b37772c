import postgres from 'postgres';
import { DuraError } from '@dura/contracts';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { Db, DbHandle } from './db-handle';
import { connectError, redact } from './connect-error';
import { listenPostgres, reconnectBackoff, register } from './listen';
import { migratePostgres } from './postgres-migrate';
import { DEFAULT_ANSWER_TIMEOUT_MS, seconds, withinDeadline, type StartBounds } from './start-bounds';

export { redact } from './connect-error';

/** Connects to Postgres at `url`, or opens an embedded PGlite (in memory, or in `pgliteDir`) when no URL is given. */
export async function openDatabase(options: {
  url?: string;
  pgliteDir?: string;
  maxConnections?: number;
  /** Bounds on the waits of the opening and of `migrate`, and who hears what they wait for (Postgres only). */
  start?: StartBounds;
}): Promise<DbHandle> {
  return options.url
    ? openPostgres(options.url, options.maxConnections ?? 10, options.start ?? {})
    : openPglite(options.pgliteDir);
}

async function openPostgres(given: string, max: number, bounds: StartBounds): Promise<DbHandle> {
  const { url, prepare } = preparedStatementsOf(given);
  const raw = postgres(url, {
    max,
    onnotice: () => undefined,
    connect_timeout: 10,
    backoff: reconnectBackoff,
  });
  const client = prepare ? preparing(raw) : raw;
  const answerMs = bounds.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS;
  try {
    await withinDeadline(
      client`select 1`,
      answerMs,
      () =>
        new DuraError(
          'database_unreachable',
          `Postgres at ${redact(url)} did not answer a first query within ${seconds(answerMs)}; ` +
            'check that the server is up and not stalled (its disk, a crash recovery, too many connections)',
          { retryable: true },
        ),
      () => client.end({ timeout: 0 }),
    );
  } catch (err) {
    await client.end({ timeout: 1 }).catch(() => undefined);
    throw err instanceof DuraError ? err : connectError(err, url);
  }
  const db = drizzlePostgres(client) as unknown as Db;
  return register({
    db,
    kind: 'postgres',
    migrate: ({ folder, table }) => migratePostgres(url, { folder, table }, bounds),
    listen: (channel, onNotify, onListening) => listenPostgres(url, channel, onNotify, onListening),
    close: () => raw.end({ timeout: 5 }),
  });
}

/**
 * `prepare=false` in the URL's query (for a pooler in transaction mode that cannot keep prepared statements)
 * turns them off; it is Dura's setting, so it is taken out of the URL the driver sees.
 */
export function preparedStatementsOf(url: string): { url: string; prepare: boolean } {
  const match = /([?&])prepare=(true|false)(&|$)/.exec(url);
  if (!match) return { url, prepare: true };
  const rest =
    url.slice(0, match.index) + (match[3] ? match[1] : '') + url.slice(match.index + match[0].length);
  return { url: rest, prepare: match[2] === 'true' };
}

/**
 * The client with every query run as a prepared statement, inside transactions too. Drizzle runs its queries
 * unprepared, and for a query with parameters postgres.js then asks the server to describe it before it
 * binds the values: two round trips per statement. Prepared, a statement is described once per connection
 * and costs one round trip from then on (postgres.js re-prepares one a schema change invalidated).
 */
function preparing(client: postgres.Sql): postgres.Sql {
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === 'unsafe')
        return (query: string, params?: unknown[], options?: postgres.UnsafeQueryOptions) =>
          target.unsafe(query, params as never, { ...options, prepare: true });
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const method = (value as (...a: unknown[]) => unknown).bind(target);
      // A transaction's (or savepoint's) callback gets a client of its own: it prepares too.
      if (prop !== 'begin' && prop !== 'savepoint') return method;
      return (...args: unknown[]) => {
        const fn = args.at(-1) as (tx: postgres.Sql) => unknown;
        return method(...args.slice(0, -1), (tx: postgres.Sql) => fn(preparing(tx)));
      };
    },
  });
}

async function openPglite(dataDir: string | undefined): Promise<DbHandle> {
  const client = dataDir ? new PGlite(dataDir) : new PGlite();
  await client.waitReady;
  const pglite = drizzlePglite(client);
  return register({
    db: pglite,
    kind: 'pglite',
    migrate: ({ folder, table }) =>
      migratePglite(pglite, { migrationsFolder: folder, migrationsTable: table }),
    async listen(channel, onNotify, onListening) {
      // One embedded instance, never restarted under us: listening once is enough.
      const unlisten = await client.listen(channel, onNotify);
      onListening?.();
      return () => unlisten();
    },
    close: () => client.close(),
  });
}

/** Rows of a raw `db.execute` result: an array with postgres.js, `{ rows }` with PGlite. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return (result as { rows?: T[] }).rows ?? [];
}
