// The one start-up of every service process: configuration, the logger, telemetry, Postgres (with the service's
// migrations) and NATS waited for while unreachable, readiness, and the drain on SIGTERM. A service's main.ts
// says only what it needs and what it builds over those connections.
import type { DbHandle } from '@dura/db';
import type { NatsSecuritySettings } from '@dura/contracts';
import { loadNatsSecurity } from './config';
import { createLogger, type Logger, type LogLevel } from './logger';
import { runMain, type StopOptions } from './main-runner';
import { connectNats, type NatsHandles } from './nats';
import { waitUntilReachable, type StartWaitOptions } from './start-wait';
import { startServiceTelemetry, type ServiceTelemetry } from './telemetry';

/** What a service's start-up reads from its configuration (every service schema has these fields). */
export interface ServiceBaseConfig extends NatsSecuritySettings {
  NATS_URL?: string | undefined;
  DATABASE_URL?: string | undefined;
  LOG_LEVEL?: LogLevel | undefined;
  LOG_FORMAT?: 'json' | 'pretty' | undefined;
  /** Serves /metrics, /healthz and /readyz on this port; unset: no metrics server (the projector serves its own). */
  METRICS_PORT?: number | undefined;
  DURA_BIND_HOST?: string | undefined;
  SHUTDOWN_GRACE_MS?: number | undefined;
}

export type ServiceNeed = 'postgres' | 'nats';

/** Handed to `prepare` and `build`: what the start-up has made so far. */
export interface ServiceStartContext<C> {
  config: C;
  log: Logger;
  /** Runs when the service stops, after its connections are closed and before telemetry flushes (last added first). */
  defer: (close: () => Promise<void>) => void;
}

export interface ServiceContext<C, P> extends ServiceStartContext<C> {
  prepared: P;
  telemetry: ServiceTelemetry;
  /** Waits (not ready) while a dependency is unreachable; pass it on to whatever binds streams at start. */
  startWait: StartWaitOptions;
  /** Present when `needs` lists 'nats'. */
  nats: NatsHandles;
  /** Present when `needs` lists 'postgres' (migrated). */
  database: DbHandle;
  /** Undefined while every connection this service needs answers; else why it is not ready. */
  connected: () => Promise<string | undefined>;
}

/** A built and started service: what it adds to readiness, and how it stops its own parts. */
export interface StartedService {
  /** The service's work (consumers, routes) stops here; runService closes the connections after it. */
  stop(drain?: StopOptions): Promise<void>;
  /** Readiness beyond the connections (undefined: ready). */
  ready?: () => Promise<string | undefined>;
}

export interface ServiceSpec<C extends ServiceBaseConfig, P> {
  /** The service's name: its logs, its spans, its NATS connection (`dura-<name>`), its messages on exit. */
  name: string;
  /** Loads and validates the configuration; a ConfigError exits 2 naming the variables. */
  config: () => C;
  needs: readonly ServiceNeed[];
  /** Before telemetry and any connection: what may still stop the start at once (tools, keys, agent files). */
  prepare?: (ctx: ServiceStartContext<C>) => Promise<P>;
  /** Told what the start waits for (undefined once through), besides `/readyz` of the metrics server. */
  onWaiting?: (prepared: P, reason: string | undefined) => void;
  /** The service's migrations, applied once Postgres answers. */
  migrate?: (database: DbHandle) => Promise<void>;
  /** Builds and starts the service over the connections. */
  build: (ctx: ServiceContext<C, P>) => Promise<StartedService>;
}

const absent = (what: string): never => {
  throw new Error(`runService: ${what} is used but not listed in needs`);
};

/** Starts `spec` as this process's service, under runMain's exit codes and drain (see runMain). */
export function runService<C extends ServiceBaseConfig, P = undefined>(spec: ServiceSpec<C, P>): void {
  runMain(spec.name, () => startService(spec));
}

/** The start-up behind runService, without the process handlers (exported for tests of a spec). */
export async function startService<C extends ServiceBaseConfig, P>(spec: ServiceSpec<C, P>) {
  const config = spec.config();
  const natsSecurity = spec.needs.includes('nats') ? loadNatsSecurity(spec.name, config) : undefined;
  const log = createLogger({ service: spec.name, level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const closers: (() => Promise<void>)[] = [];
  const defer = (close: () => Promise<void>) => void closers.push(close);
  const prepared = (await spec.prepare?.({ config, log, defer })) as P;
  // Before anything is built, so every instrument the service declares is registered with it.
  const telemetry = await startServiceTelemetry({
    service: spec.name,
    log,
    metricsPort: config.METRICS_PORT,
    metricsHost: config.DURA_BIND_HOST,
  });
  // Waits (not ready) while Postgres or NATS is unreachable; bad credentials still stop the start.
  const startWait: StartWaitOptions = {
    log,
    onWaiting: (reason) => {
      telemetry.waiting(reason);
      spec.onWaiting?.(prepared, reason);
    },
  };
  let database: DbHandle | undefined;
  if (spec.needs.includes('postgres')) {
    const url = config.DATABASE_URL ?? absent('DATABASE_URL');
    // Loaded only here: a service without Postgres (the planner) does not import the drivers at all.
    const { openDatabase } = await import('@dura/db');
    // Every Postgres step is bounded (a retryable failure is waited out); what a step waits for meanwhile
    // (the migration lock and its holder) is logged and becomes the reason for not being ready.
    const start = {
      onWaiting: (reason: string) => {
        log.warn(reason);
        startWait.onWaiting?.(reason);
      },
    };
    const opened = await waitUntilReachable('Postgres', () => openDatabase({ url, start }), startWait);
    const migrate = spec.migrate;
    if (migrate)
      await waitUntilReachable('Postgres to apply the migrations', () => migrate(opened), startWait);
    database = opened;
  }
  const nats = natsSecurity
    ? await connectNats(config.NATS_URL ?? absent('NATS_URL'), `dura-${spec.name}`, log, natsSecurity, {
        waitForServer: startWait,
      })
    : undefined;
  const sql = database ? (await import('drizzle-orm')).sql : undefined;
  const connected = async (): Promise<string | undefined> => {
    if (nats?.nc.isClosed()) return 'the NATS connection is closed';
    if (database && sql) await database.db.execute(sql`select 1`);
    return undefined;
  };
  const service = await spec.build({
    config,
    log,
    defer,
    prepared,
    telemetry,
    startWait,
    get nats() {
      return nats ?? absent('nats');
    },
    get database() {
      return database ?? absent('postgres');
    },
    connected,
  });
  // Ready: started (consumers bound, migrations applied) and every connection it needs answers.
  telemetry.ready(async () => (await connected()) ?? (await service.ready?.()));
  return {
    graceMs: config.SHUTDOWN_GRACE_MS,
    async stop(drain?: StopOptions) {
      await service.stop(drain);
      await nats?.nc.drain();
      await database?.close();
      for (const close of closers.reverse()) await close();
      // Last, so it exports the drain too.
      await telemetry.stop();
    },
  };
}
