import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/** The drizzle database every service codes against, whichever driver is underneath. */
export type Db = PgDatabase<PgQueryResultHKT, Record<string, never>>;

export interface DbHandle {
  readonly db: Db;
  readonly kind: 'postgres' | 'pglite';
  /** Applies a service's migrations once, even when several replicas start together. */
  migrate(options: { folder: string; table: string }): Promise<void>;
  /**
   * LISTENs on `channel` and calls `onNotify` with each NOTIFY payload (delivered on commit). `onListening` runs
   * each time the listen is (re-)established, e.g. after a server restart, when notifications may have been
   * missed. Resolves with a function that stops listening.
   */
  listen(channel: string, onNotify: NotifyHandler, onListening?: () => void): Promise<Unlisten>;
  close(): Promise<void>;
}

export type NotifyHandler = (payload: string) => void;
export type Unlisten = () => Promise<void>;
