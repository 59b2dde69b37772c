import { basename } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { infraMode, type InfraMode } from './infra-mode';
import { startNatsServer, type NatsServerHandle } from './nats-server';
import { createTestDatabase, type TestDatabaseHandle } from './test-database';

export interface TestInfra {
  nats: NatsServerHandle;
  db: TestDatabaseHandle;
  mode: InfraMode;
}

export interface UseTestInfraOptions {
  /** Create a fresh Postgres database (default true). */
  database?: boolean;
  /** Start a NATS server with JetStream (default true). */
  nats?: boolean;
}

function specPrefix(): string {
  // Naming the database after the spec file makes a leaked one easy to trace.
  const path = expect.getState().testPath;
  return path ? basename(path).replace(/\.spec\.[cm]?[jt]s$/, '') : 'spec';
}

function missing(what: string, option: string, wanted: boolean): never {
  throw new Error(
    wanted
      ? `useTestInfra(): the ${what} did not start; see the beforeAll error`
      : `useTestInfra({ ${option}: false }) was called, so this spec file has no ${what}`,
  );
}

// Starting containers can mean pulling images; local servers take well under a second.
const HOOK_TIMEOUT_MS = 120_000;

/** Vitest helper: registers beforeAll/afterAll in the calling spec file, returns a lazy accessor. */
export function useTestInfra(opts: UseTestInfraOptions = {}): () => TestInfra {
  const wantDb = opts.database ?? true;
  const wantNats = opts.nats ?? true;
  let mode: InfraMode | undefined;
  let nats: NatsServerHandle | undefined;
  let db: TestDatabaseHandle | undefined;

  beforeAll(async () => {
    mode = await infraMode();
    // Start both before failing, and keep whatever started, so afterAll can clean up a half-built setup.
    const results = await Promise.allSettled([
      wantNats ? startNatsServer().then((handle) => (nats = handle)) : undefined,
      wantDb ? createTestDatabase({ prefix: specPrefix() }).then((handle) => (db = handle)) : undefined,
    ]);
    for (const result of results) if (result.status === 'rejected') throw result.reason;
  }, HOOK_TIMEOUT_MS);

  afterAll(async () => {
    // Teardown runs whether or not the tests passed; collect errors so one failure does not leak the other.
    const results = await Promise.allSettled([nats?.[Symbol.asyncDispose](), db?.[Symbol.asyncDispose]()]);
    nats = undefined;
    db = undefined;
    const failures = results.flatMap((result) =>
      result.status === 'rejected' ? [result.reason as unknown] : [],
    );
    if (failures.length > 0) throw new AggregateError(failures, 'useTestInfra teardown failed');
  }, HOOK_TIMEOUT_MS);

  return () => {
    if (mode === undefined)
      throw new Error('useTestInfra(): infrastructure is only available inside tests and hooks');
    const current = mode;
    return {
      get nats() {
        return nats ?? missing('NATS server', 'nats', wantNats);
      },
      get db() {
        return db ?? missing('database', 'database', wantDb);
      },
      mode: current,
    };
  };
}
