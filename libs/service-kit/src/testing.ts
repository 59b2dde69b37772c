// Test helpers for the services built on this kit: one logger and one way to open a replica's connections,
// shared by every service's tests (`@dura/service-kit/testing`; not part of the services' build).
import type { Db, DbHandle } from '@dura/db';
import { createEventStore, type EventStore, type StreamOptions } from '@dura/event-store';
import { createLogger, type Logger } from './logger';
import { connectNats, type NatsHandles } from './nats';

/** The streams as a test creates them: one replica, the production duplicate window, on file. */
export const TEST_STREAM_OPTIONS: StreamOptions = {
  replicas: 1,
  duplicateWindowMs: 120_000,
  storage: 'file',
};

/** Silent unless DURA_TEST_VERBOSE=1: expected dead letters and retries would read like failures. */
export function testLogger(service: string): Logger {
  const verbose = process.env['DURA_TEST_VERBOSE'] === '1';
  const write = verbose ? (line: string) => process.stderr.write(`${line}\n`) : () => undefined;
  return createLogger({ service, level: 'debug', format: 'pretty', write });
}

/** One replica's own NATS connection, with an event store on it. */
export interface TestConnections extends NatsHandles {
  store: EventStore;
  close(): Promise<void>;
}

/** A replica's connections with its own Postgres pool as well. */
export interface TestDbConnections extends TestConnections {
  database: DbHandle;
  db: Db;
}

/**
 * Opens one replica's connections as a service would (`connectNats` under `name`), and with `databaseUrl` its
 * own Postgres pool; `close` closes them all. A pool that fails to open closes the NATS connection first.
 */
export async function testConnections(natsUrl: string, name: string): Promise<TestConnections>;
export async function testConnections(
  natsUrl: string,
  name: string,
  databaseUrl: string,
): Promise<TestDbConnections>;
export async function testConnections(
  natsUrl: string,
  name: string,
  databaseUrl?: string,
): Promise<TestConnections | TestDbConnections> {
  // The Postgres driver is loaded only when asked for, as the services load it (see runService).
  const db = databaseUrl === undefined ? undefined : await import('@dura/db');
  const nats = await connectNats(natsUrl, name);
  const store = createEventStore(nats);
  if (databaseUrl === undefined || db === undefined) return { ...nats, store, close: () => nats.nc.close() };
  const database = await db.openDatabase({ url: databaseUrl }).catch(async (err: unknown) => {
    await nats.nc.close();
    throw err;
  });
  return {
    ...nats,
    store,
    database,
    db: database.db,
    async close() {
      await Promise.allSettled([nats.nc.close(), database.close()]);
    },
  };
}
