// The system multi-replica on one machine: a NATS cluster with R3 streams, and each service replica as its
// own OS process. What Kubernetes runs in production, for tests, benchmarks and `npm run cluster`.
// It starts nats-server processes and services the way the test harness does, so it uses @dura/testing,
// which the module boundaries keep for tests and harnesses (like the bench).
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase } from '@dura/db';
import { migrateProjector } from '@dura/projector';
import { migrateGateway } from '@dura/tool-gateway';
// eslint-disable-next-line @nx/enforce-module-boundaries -- a harness, like the bench (see above)
import {
  freePort,
  spawnTsEntry,
  startNatsCluster,
  type ManagedProcess,
  type NatsClusterHandle,
  type ProcessExit,
} from '@dura/testing';
import { clusterUsers, type ClusterUsers } from './cluster-users';
import type { ServiceKind } from './service-kind';

export type { ServiceKind } from './service-kind';

/** Every service's stream and bucket replication in the cluster: one copy per NATS node. */
export const CLUSTER_STREAM_REPLICAS = 3;

const READY: Record<ServiceKind, RegExp> = {
  planner: /planner started/,
  'tool-gateway': /tool gateway started/,
  projector: /projector api listening/,
};
const SHORT: Record<ServiceKind, string> = {
  planner: 'planner',
  'tool-gateway': 'gateway',
  projector: 'projector',
};
const READY_TIMEOUT_MS = 120_000;
const START_ATTEMPTS = 3;
const RESTART_PAUSE_MS = 1_000;

export interface ClusterReplica {
  readonly kind: ServiceKind;
  /** gateway-1, planner-2, ... */
  readonly label: string;
  readonly proc: ManagedProcess;
  /** Its Prometheus endpoint (the projector serves /metrics on its API port). */
  readonly metricsUrl: string;
  /** The projector's read API; undefined for other services. */
  readonly apiUrl: string | undefined;
  /** Spawn to ready line, ms. */
  readonly startupMs: number;
}

export interface UnexpectedExit {
  label: string;
  exit: ProcessExit;
  /** The end of its output. */
  tail: string;
}

/** A replica's start that did not reach its ready line (it was started again, up to a few times). */
export interface StartFailure {
  label: string;
  attempt: number;
  /** The exit or timeout, with the end of its output. */
  reason: string;
}

export interface DuraClusterOptions {
  /** The database every replica shares; it must exist (migrations are applied here). */
  databaseUrl: string;
  planners?: number;
  gateways?: number;
  projectors?: number;
  /** nats-server processes (default 3). */
  natsNodes?: number;
  /** Where the NATS nodes keep their stores (kept on stop); default a temp dir, removed on stop. */
  natsDir?: string;
  /** Each NATS node in a network namespace of its own, so a test can partition it (needs root). */
  isolatedNats?: boolean;
  /** More environment for every replica (tool modules, ack waits, ...). */
  env?: Record<string, string>;
  /** Called with one line as each piece starts. */
  progress?: (line: string) => void;
}

export interface DuraCluster extends AsyncDisposable {
  readonly nats: NatsClusterHandle;
  /** NATS runs with the shipped least-privilege permissions; each replica connects as its service's user. */
  readonly users: ClusterUsers;
  /** The environment every replica starts with (NATS_URL, DATABASE_URL, DURA_STREAM_REPLICAS, ...). */
  readonly env: Readonly<Record<string, string>>;
  /** Every replica started so far, in start order. */
  readonly replicas: readonly ClusterReplica[];
  of(kind: ServiceKind): ClusterReplica[];
  /** The first projector's read API (http://127.0.0.1:<port>). */
  readonly apiUrl: string;
  /** Starts one more replica of `kind` and waits until it says it is ready. */
  start(kind: ServiceKind, env?: Record<string, string>): Promise<ClusterReplica>;
  /** Replicas that ended while the cluster was not stopping them: a crash, whatever the cause. */
  unexpectedExits(): readonly UnexpectedExit[];
  /** Starts that failed before the replica was ready; each was retried. */
  startFailures(): readonly StartFailure[];
  /** SIGTERMs every replica (they drain), then stops the NATS cluster. */
  stop(): Promise<void>;
}

/** Starts the NATS cluster, applies migrations, then the projectors, gateways and planners, in that order. */
export async function startDuraCluster(options: DuraClusterOptions): Promise<DuraCluster> {
  const progress = options.progress ?? (() => undefined);
  const replicas: ClusterReplica[] = [];
  // Every process spawned, ready or not, so a failed start leaves nothing running.
  const procs: ManagedProcess[] = [];
  const exits: UnexpectedExit[] = [];
  const startFailures: StartFailure[] = [];
  const counts = new Map<ServiceKind, number>();
  let stopping = false;
  let nats: NatsClusterHandle | undefined;
  const users = clusterUsers();

  const stop = async (): Promise<void> => {
    stopping = true;
    await Promise.allSettled(procs.map((proc) => proc.kill('SIGTERM')));
    await nats?.stop();
  };

  try {
    const nodes = options.natsNodes ?? 3;
    progress(`starting NATS: ${nodes} nats-server nodes, JetStream clustered…`);
    const cluster = await startNatsCluster({
      nodes,
      ...users.natsConfig,
      ...(options.natsDir === undefined ? {} : { dir: options.natsDir }),
      ...(options.isolatedNats ? { isolated: true } : {}),
    });
    nats = cluster;
    progress(`  nats      ${cluster.servers} (meta leader ${await cluster.metaLeader()})`);

    progress('applying migrations…');
    await migrate(options.databaseUrl);

    const env: Record<string, string> = {
      NATS_URL: cluster.servers,
      DATABASE_URL: options.databaseUrl,
      DURA_STREAM_REPLICAS: String(Math.min(CLUSTER_STREAM_REPLICAS, nodes)),
      LOG_LEVEL: 'info',
      // A local cluster runs the demo's and the tests' inline plans (off by default in the planner service).
      DURA_INLINE_PLANS: 'true',
      ...options.env,
    };

    /** One process of `label`; resolves once it says it is ready, rejects if it exits or hangs first. */
    const spawnReplica = async (
      kind: ServiceKind,
      label: string,
      extra: Record<string, string>,
    ): Promise<ClusterReplica> => {
      const port = await freePort();
      const portEnv =
        kind === 'projector' ? { PROJECTOR_HTTP_PORT: String(port) } : { METRICS_PORT: String(port) };
      const began = performance.now();
      const proc = spawnTsEntry({
        name: label,
        entry: `services/${kind}/src/main.ts`,
        env: { ...env, ...users.envOf(kind), ...portEnv, ...extra },
      });
      procs.push(proc);
      let ready = false;
      void proc.exited.then((exit) => {
        if (stopping || !ready) return;
        exits.push({ label, exit, tail: proc.output().slice(-4_000) });
        progress(
          `${label} exited (code ${exit.code}, signal ${exit.signal}); its last output:\n${proc.output().slice(-2_000)}`,
        );
      });
      try {
        await proc.waitForOutput(READY[kind], READY_TIMEOUT_MS);
      } catch (error) {
        await proc.kill('SIGKILL');
        throw error;
      }
      ready = true;
      const base = `http://127.0.0.1:${port}`;
      return {
        kind,
        label,
        proc,
        metricsUrl: `${base}/metrics`,
        apiUrl: kind === 'projector' ? base : undefined,
        startupMs: Math.round(performance.now() - began),
      };
    };

    // As an orchestrator would, a replica that fails to start is started again (a few times, then it is an
    // error): on a busy machine a JetStream call at startup can time out while R3 assets are placed.
    const start = async (kind: ServiceKind, extra: Record<string, string> = {}): Promise<ClusterReplica> => {
      const n = (counts.get(kind) ?? 0) + 1;
      counts.set(kind, n);
      const label = `${SHORT[kind]}-${n}`;
      for (let attempt = 1; ; attempt += 1) {
        try {
          const replica = await spawnReplica(kind, label, extra);
          replicas.push(replica);
          const api = replica.apiUrl === undefined ? '' : `api ${replica.apiUrl}/runs, `;
          progress(
            `  ${label.padEnd(11)} pid ${replica.proc.pid}, ready in ${replica.startupMs} ms  ${api}metrics ${replica.metricsUrl}`,
          );
          return replica;
        } catch (error) {
          const reason = (error as Error).message;
          startFailures.push({ label, attempt, reason });
          if (stopping || attempt >= START_ATTEMPTS) throw error;
          progress(
            `  ${label} failed to start (attempt ${attempt} of ${START_ATTEMPTS}); starting it again:\n${reason.slice(-1_500)}`,
          );
          await sleep(RESTART_PAUSE_MS);
        }
      }
    };

    const plan: [ServiceKind, number][] = [
      ['projector', options.projectors ?? 1],
      ['tool-gateway', options.gateways ?? 3],
      ['planner', options.planners ?? 2],
    ];
    for (const [kind, count] of plan) {
      if (count === 0) continue;
      progress(`starting ${count} ${kind}${count === 1 ? '' : 's'}…`);
      await Promise.all(Array.from({ length: count }, () => start(kind)));
    }

    const of = (kind: ServiceKind) => replicas.filter((replica) => replica.kind === kind);
    return {
      nats: cluster,
      users,
      env,
      replicas,
      of,
      get apiUrl() {
        const api = of('projector')[0]?.apiUrl;
        if (api === undefined) throw new Error('this cluster runs no projector, so it has no read API');
        return api;
      },
      start,
      unexpectedExits: () => exits,
      startFailures: () => startFailures,
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function migrate(databaseUrl: string): Promise<void> {
  const database = await openDatabase({ url: databaseUrl, maxConnections: 2 });
  try {
    await migrateGateway(database);
    await migrateProjector(database);
  } finally {
    await database.close();
  }
}
