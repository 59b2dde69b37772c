// A whole Dura deployment owned by one test: its own nats-server and Postgres server (both restartable), the
// payment witness the tools charge through, and each service replica as a supervised OS process.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import postgres from 'postgres';
import {
  freePort,
  startNatsServer,
  startPaymentWitness,
  startPrivatePostgres,
  startTcpLink,
  type NatsServerHandle,
  type PaymentWitness,
  type PrivatePostgresHandle,
  type TcpLink,
} from '@dura/testing';
import { superviseService, type ServiceName, type ServiceSlot } from './supervisor';

export const WITNESS_TOOLS = fileURLToPath(new URL('../fixtures/witness-tools.ts', import.meta.url));

/**
 * Recovery knobs (read by the services): a killed consumer's message comes back after 3 s, and a crashed
 * call's lease (witness tools: 3 s timeout + margin) runs out after 4 s. Heartbeats every ackWait/2 keep a
 * live handler's message, so nothing is taken from a replica that is merely slow.
 */
export const FAST_RECOVERY_ENV = {
  PLANNER_ACK_WAIT_MS: '3000',
  GATEWAY_ACK_WAIT_MS: '3000',
  GATEWAY_LEASE_MARGIN_MS: '1000',
  RELAY_POLL_MS: '250',
};

export interface ClusterOptions {
  planners: number;
  gateways: number;
  /** Workers (planner and gateway in one process) beside them (default 0). */
  workers?: number;
  /** Extra environment for every service. */
  env?: Record<string, string>;
  /** Extra environment for one replica, by its label (`planner-1`, ...): a fake clock, say. */
  envFor?: (label: string) => Record<string, string>;
  /** The nats-server's JetStream store directory (default a fresh temp dir): a small mount, say. */
  natsStoreDir?: string;
  /** An empty directory for Postgres's cluster (default a fresh temp dir): a small mount, say. */
  pgDir?: string;
  /** Replicas (by label) that reach the nats-server through a link the test can cut (`Cluster.links`). */
  natsLinks?: readonly string[];
}

export interface Cluster extends AsyncDisposable {
  nats: NatsServerHandle;
  pg: PrivatePostgresHandle;
  witness: PaymentWitness;
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  sql: postgres.Sql;
  apiUrl: string;
  slots: ServiceSlot[];
  /** The links of `natsLinks`, by label: cut one and that replica is partitioned from NATS. */
  links: ReadonlyMap<string, TcpLink>;
  /** Waits until every slot's current process is ready. */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGKILLs the nats-server, keeps it down `downMs`, starts it again on the same port and store. */
  restartNats(downMs: number): Promise<void>;
  /** SIGKILLs Postgres (postmaster and backends), keeps it down `downMs`, starts it again (crash recovery). */
  restartPostgres(downMs: number): Promise<void>;
  /** Lines of the scripted model's call log: one per model call, from every planner. */
  modelCalls(): Promise<{ runId: string; decisions: number }[]>;
  close(): Promise<void>;
}

/** Starts nats-server, Postgres and the witness, then the services (projector, gateways, planners, workers). */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  if (!existsSync(WITNESS_TOOLS)) throw new Error(`the witness tool module ${WITNESS_TOOLS} is missing`);
  const cleanups: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    cleanups.length = 0;
  };
  try {
    const nats = await startNatsServer(options.natsStoreDir ? { storeDir: options.natsStoreDir } : {});
    cleanups.push(() => nats[Symbol.asyncDispose]());
    const pg = await startPrivatePostgres(options.pgDir ? { dir: options.pgDir } : {});
    cleanups.push(() => pg[Symbol.asyncDispose]());
    const witness = await startPaymentWitness();
    cleanups.push(() => witness.close());
    const logDir = await mkdtemp(join(tmpdir(), 'dura-soak-'));
    cleanups.push(() => rm(logDir, { recursive: true, force: true }));
    const modelLog = join(logDir, 'model-calls.jsonl');

    // The observer reconnects for as long as it takes: the test restarts the broker under it.
    const nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    cleanups.push(() => nc.close());
    const sql = postgres(pg.url, { max: 4, onnotice: () => undefined, backoff: () => 0.25 });
    cleanups.push(() => sql.end({ timeout: 1 }));
    const apiPort = await freePort();
    const env: Record<string, string> = {
      NATS_URL: nats.url,
      DATABASE_URL: pg.url,
      PROJECTOR_HTTP_PORT: String(apiPort),
      DURA_TOOLS_MODULES: WITNESS_TOOLS,
      WITNESS_URL: witness.url,
      DURA_SCRIPTED_MODEL_LOG: modelLog,
      ...FAST_RECOVERY_ENV,
      ...options.env,
    };
    const plan: [ServiceName, number][] = [
      ['projector', 1],
      ['tool-gateway', options.gateways],
      ['planner', options.planners],
      ['worker', options.workers ?? 0],
    ];
    const links = new Map<string, TcpLink>();
    for (const label of options.natsLinks ?? []) {
      const link = await startTcpLink({ host: '127.0.0.1', port: Number(new URL(nats.url).port) });
      cleanups.push(() => link.close());
      links.set(label, link);
    }
    const natsUrlFor = (label: string): Record<string, string> => {
      const link = links.get(label);
      return link ? { NATS_URL: link.urlFor(nats.url) } : {};
    };
    const slots: ServiceSlot[] = [];
    cleanups.push(() => Promise.allSettled(slots.map((slot) => slot.stop())));
    for (const [name, count] of plan)
      for (let i = 1; i <= count; i += 1) {
        const label = `${name}-${i}`;
        slots.push(
          superviseService(name, label, () => ({ ...env, ...natsUrlFor(label), ...options.envFor?.(label) })),
        );
      }

    const cluster: Cluster = {
      nats,
      pg,
      witness,
      nc,
      js: jetstream(nc),
      jsm: await jetstreamManager(nc),
      sql,
      apiUrl: `http://127.0.0.1:${apiPort}`,
      slots,
      links,
      ready: async (timeoutMs = 120_000) => {
        await Promise.all(slots.map((slot) => slot.ready(timeoutMs)));
      },
      restartNats: async (downMs) => {
        await nats.kill();
        await sleep(downMs);
        await nats.restart();
      },
      restartPostgres: async (downMs) => {
        await pg.kill();
        await sleep(downMs);
        await pg.restart();
      },
      modelCalls: async () => {
        const text = await readFile(modelLog, 'utf8').catch(() => '');
        return text
          .split('\n')
          .filter((line) => line.trim().length > 0)
          .map((line) => JSON.parse(line) as { runId: string; decisions: number });
      },
      close: closeAll,
      [Symbol.asyncDispose]: closeAll,
    };
    await cluster.ready();
    return cluster;
  } catch (error) {
    await closeAll();
    throw error;
  }
}
