import postgres from 'postgres';
import { redact } from '@dura/db';
import { DuraError } from '@dura/contracts';

export const DEFAULT_CLUSTER_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface ClusterDatabase {
  /** postgres://... of the database the replicas use. */
  readonly url: string;
  readonly name: string;
  /** A fresh `dura_cluster_<timestamp>` made for this cluster (not a database named by the caller). */
  readonly fresh: boolean;
  /** DROP DATABASE ... WITH (FORCE); does nothing to a database named by the caller. */
  drop(): Promise<void>;
}

/** `dura_cluster_<yyyymmdd>_<hhmmss>_<ms>` (UTC): sorts by start time, so old ones are easy to find and drop. */
export function clusterDatabaseName(now: Date): string {
  const stamp = now.toISOString().replace(/\D/g, '').slice(0, 17);
  return `dura_cluster_${stamp.slice(0, 8)}_${stamp.slice(8, 14)}_${stamp.slice(14)}`;
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/**
 * The cluster's database on the server of `serverUrl`: `name` if given (created when missing, never dropped),
 * else a fresh `dura_cluster_<timestamp>`.
 */
export async function openClusterDatabase(serverUrl: string, name?: string): Promise<ClusterDatabase> {
  const wanted = name ?? clusterDatabaseName(new Date());
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(wanted))
    throw new DuraError(
      'bad_database_name',
      `"${wanted}" is not a database name Dura creates: use [a-z0-9_], 63 at most`,
    );
  const admin = postgres(serverUrl, { max: 1, connect_timeout: 5, onnotice: () => undefined });
  try {
    const [row] = await admin<{ exists: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = ${wanted}) AS exists`;
    if (!row?.exists) {
      await admin`CREATE DATABASE ${admin(wanted)}`;
    } else if (name === undefined) {
      throw new DuraError('database_exists', `database ${wanted} already exists; start again`);
    }
  } catch (err) {
    if (err instanceof DuraError) throw err;
    throw new DuraError(
      'database_unreachable',
      `cannot create database ${wanted} through ${redact(serverUrl)} (${(err as Error).message}); ` +
        'start Postgres or point DATABASE_URL at a server where this role may CREATE DATABASE',
      { cause: err },
    );
  } finally {
    await admin.end({ timeout: 5 });
  }
  const fresh = name === undefined;
  return {
    url: withDatabase(serverUrl, wanted),
    name: wanted,
    fresh,
    async drop() {
      if (!fresh) return;
      const sql = postgres(serverUrl, { max: 1, connect_timeout: 5, onnotice: () => undefined });
      try {
        await sql`DROP DATABASE IF EXISTS ${sql(wanted)} WITH (FORCE)`;
      } finally {
        await sql.end({ timeout: 5 });
      }
    },
  };
}
