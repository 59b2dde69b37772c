// One Dura deployment for one scenario: a fresh nats-server (temp store) or JetStream cluster (every stream
// replicated on each node), a fresh database on the local Postgres (durability as configured there), and each
// service replica as its own OS process.
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { resolve } from 'node:path';
import postgres from 'postgres';
import {
  createTestDatabase,
  freePort,
  spawnTsEntry,
  startNatsCluster,
  startNatsServer,
  type ManagedProcess,
  type TestDatabaseHandle,
} from '@dura/testing';

export type ServiceName = 'planner' | 'tool-gateway' | 'projector' | 'worker';

const READY: Record<ServiceName, RegExp> = {
  planner: /planner started/,
  'tool-gateway': /tool gateway started/,
  projector: /projector api listening/,
  worker: /worker started/,
};

/**
 * The services that read DURA_AGENTS (a worker runs a planner). The others start without it: a code agents
 * module is TypeScript, and spawnTsEntry starts a process whose env names one through tsx rather than from
 * its bundle, at several times the start-up CPU, for a module it would never load.
 */
const READS_AGENTS: ReadonlySet<ServiceName> = new Set(['planner', 'worker']);

export interface ServiceProcess {
  label: string;
  proc: ManagedProcess;
  /** Spawn → ready line, ms. */
  startupMs: number;
  /** A projector's HTTP API. */
  apiUrl?: string;
}

export interface Deployment extends AsyncDisposable {
  /** `url`: what NATS_URL says (every node's URL, comma-separated, for a cluster); `nodes`: nats-server processes. */
  nats: { url: string; nodes: number };
  db: TestDatabaseHandle;
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  sql: postgres.Sql;
  env: Record<string, string>;
  services: ServiceProcess[];
  /** Spawns one replica and waits for its ready line. */
  start(name: ServiceName): Promise<ServiceProcess>;
  close(): Promise<void>;
}

/**
 * Starts NATS and a database; services are started by the caller (`start`), in the order it needs. With
 * `natsNodes` above 1, NATS is a JetStream cluster of that many nodes and the services create every stream and
 * bucket with one replica per node (at most 3).
 */
export async function openDeployment(
  prefix: string,
  env: Record<string, string> = {},
  options: { natsNodes?: number } = {},
): Promise<Deployment> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    cleanups.length = 0;
  };
  try {
    const nodes = options.natsNodes ?? 1;
    const nats = await startNats(nodes);
    cleanups.push(nats.stop);
    const db = await createTestDatabase({ prefix: `bench_${prefix}` });
    cleanups.push(() => db.drop());
    const nc = await connect({ servers: nats.url.split(','), name: 'dura-bench' });
    cleanups.push(() => nc.close());
    const sql = postgres(db.url, { max: 2, onnotice: () => undefined });
    cleanups.push(() => sql.end({ timeout: 2 }));
    const services: ServiceProcess[] = [];
    cleanups.push(() => Promise.allSettled(services.map((s) => s.proc.kill('SIGTERM'))));
    const serviceEnv = {
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      ...(nodes > 1 ? { DURA_STREAM_REPLICAS: String(Math.min(3, nodes)) } : {}),
      LOG_LEVEL: 'info',
      // The benchmark's workloads are inline scripted plans (off by default in the planner service).
      DURA_INLINE_PLANS: 'true',
      ...env,
    };
    const counts = new Map<ServiceName, number>();
    const deployment: Deployment = {
      nats: { url: nats.url, nodes },
      db,
      nc,
      js: jetstream(nc),
      jsm: await jetstreamManager(nc),
      sql,
      env: serviceEnv,
      services,
      async start(name) {
        const n = (counts.get(name) ?? 0) + 1;
        counts.set(name, n);
        const port = name === 'projector' ? { PROJECTOR_HTTP_PORT: String(await freePort()) } : {};
        const began = performance.now();
        const proc = spawnTsEntry({
          name: `${name}-${n}`,
          entry: `services/${name}/src/main.ts`,
          env: { ...serviceEnv, ...(READS_AGENTS.has(name) ? {} : { DURA_AGENTS: undefined }), ...port },
          nodeArgs: profileArgs(`${name}-${n}`),
        });
        const apiUrl = port.PROJECTOR_HTTP_PORT && `http://127.0.0.1:${port.PROJECTOR_HTTP_PORT}`;
        const service: ServiceProcess = {
          label: `${name}-${n}`,
          proc,
          startupMs: 0,
          ...(apiUrl ? { apiUrl } : {}),
        };
        services.push(service);
        await proc.waitForOutput(READY[name], 120_000);
        service.startupMs = performance.now() - began;
        return service;
      },
      close,
      [Symbol.asyncDispose]: close,
    };
    return deployment;
  } catch (error) {
    await close();
    throw error;
  }
}

/** One nats-server, or a JetStream cluster of `nodes` (the tests' own), as a URL for clients and a stop. */
async function startNats(nodes: number): Promise<{ url: string; stop: () => Promise<void> }> {
  if (nodes > 1) {
    const cluster = await startNatsCluster({ nodes });
    return { url: cluster.servers, stop: () => cluster.stop() };
  }
  const server = await startNatsServer();
  return { url: server.url, stop: () => server[Symbol.asyncDispose]() };
}

/**
 * With `BENCH_CPU_PROF=<dir>`, every service writes a V8 CPU profile to `<dir>/<replica>/` when it stops
 * (the deployment stops services with SIGTERM, so they exit through their graceful path and the profile is
 * written). `node scripts/cpu-profile-top.mjs <dir>` summarizes them.
 */
function profileArgs(label: string): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(dir, label)}`] : [];
}

/** The services a measurement runs on: `workers` workers when set, else `gateways` gateways and `planners` planners. */
export interface Replicas {
  gateways: number;
  planners: number;
  workers?: number;
}

/** How many replicas of each kind of service a deployment runs. */
export type Running = Partial<Record<ServiceName, number>>;

/** The replicas of each kind `deployment` runs now. */
export function runningOf(deployment: Pick<Deployment, 'services'>): Running {
  const running: Running = {};
  for (const service of deployment.services) {
    const kind = service.label.replace(/-\d+$/, '') as ServiceName;
    running[kind] = (running[kind] ?? 0) + 1;
  }
  return running;
}

/**
 * Starts the projector, then `workers` workers when there are any (planner and gateway in one process),
 * else `gateways` gateways and `planners` planners (in that order, as the soak cluster does); replicas the
 * deployment runs already count, so only the missing ones start.
 */
export async function startServices(deployment: Deployment, counts: Replicas): Promise<void> {
  const startUpTo = async (name: ServiceName, wanted: number) => {
    for (let n = runningOf(deployment)[name] ?? 0; n < wanted; n += 1) await deployment.start(name);
  };
  await startUpTo('projector', 1);
  if (counts.workers) return startUpTo('worker', counts.workers);
  await startUpTo('tool-gateway', counts.gateways);
  await startUpTo('planner', counts.planners);
}

/** The replicas A, B and the growth scenarios run on: `workers` workers when set, else a gateway and `planners`. */
export function replicasOf(sizes: { workers: number; planners: number }): Replicas {
  return sizes.workers > 0
    ? { gateways: sizes.workers, planners: sizes.workers, workers: sizes.workers }
    : { gateways: 1, planners: sizes.planners };
}
