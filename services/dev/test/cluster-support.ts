// Shared by the cluster-*.e2e.spec.ts files: the system multi-replica (startDuraCluster) over a 3-node NATS
// cluster, the payment witness its tools charge through, and the checks a run must pass afterwards.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { createDuraClient, TERMINAL_EVENTS, type DuraClient } from '@dura/client';
import { STREAMS, type RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { createEventStore, openNatsConnection } from '@dura/event-store';
import {
  createTestDatabase,
  startPaymentWitness,
  type PaymentWitness,
  type TestDatabaseHandle,
} from '@dura/testing';
import { startDuraCluster, type DuraCluster, type DuraClusterOptions } from '../src/cluster/dura-cluster';
import { WITNESS_TOOLS, type ModelCallEntry, type PlanRequest } from './crash-harness';
import { eventually, getJson } from './system';

/** As in the crash tests: a message held by a dead consumer comes back within seconds. */
const RECOVERY_ENV = {
  PLANNER_ACK_WAIT_MS: '3000',
  GATEWAY_ACK_WAIT_MS: '3000',
  GATEWAY_LEASE_MARGIN_MS: '1000',
};

export interface ClusterSystem {
  cluster: DuraCluster;
  witness: PaymentWitness;
  /** The test's own connection, to every node of the NATS cluster. */
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  client: DuraClient;
  /** Every scripted-model call, from every planner. */
  modelCalls(): Promise<ModelCallEntry[]>;
}

export type ClusterShape = Pick<DuraClusterOptions, 'planners' | 'gateways' | 'projectors' | 'isolatedNats'> & {
  env?: Record<string, string>;
};

/** Registers beforeAll/afterAll: a fresh database, the witness, and the cluster of `shape` over it. */
export function useDuraCluster(prefix: string, shape: ClusterShape): () => ClusterSystem {
  let db: TestDatabaseHandle | undefined;
  let witness: PaymentWitness | undefined;
  let cluster: DuraCluster | undefined;
  let nc: NatsConnection | undefined;
  let logDir: string | undefined;
  let current: ClusterSystem | undefined;

  beforeAll(async () => {
    db = await createTestDatabase({ prefix });
    witness = await startPaymentWitness();
    logDir = await mkdtemp(join(tmpdir(), 'dura-cluster-'));
    const modelLog = join(logDir, 'model-calls.jsonl');
    const verbose = process.env['DURA_TEST_VERBOSE'] === '1';
    cluster = await startDuraCluster({
      databaseUrl: db.url,
      ...shape,
      env: {
        ...RECOVERY_ENV,
        DURA_TOOLS_MODULES: WITNESS_TOOLS,
        WITNESS_URL: witness.url,
        DURA_SCRIPTED_MODEL_LOG: modelLog,
        ...shape.env,
      },
      ...(verbose ? { progress: (line: string) => process.stderr.write(`[cluster] ${line}\n`) } : {}),
    });
    // The tests observe (and fault-inject) as the admin user; the replicas run as their own users.
    nc = await openNatsConnection({
      url: cluster.nats.servers,
      name: 'cluster-test',
      security: cluster.users.securityOf('admin'),
      // Pings as the services ping: a node cut off by a partition is left within seconds, not minutes.
      connect: { maxReconnectAttempts: -1, reconnectTimeWait: 250, pingInterval: 2_000, maxPingOut: 3 },
    });
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    current = {
      cluster,
      witness,
      nc,
      js,
      jsm,
      client: createDuraClient({ js, jsm, apiUrl: cluster.apiUrl }),
      modelCalls: async () => {
        const text = await readFile(modelLog, 'utf8').catch(() => '');
        return text
          .split('\n')
          .filter((line) => line.trim().length > 0)
          .map((line) => JSON.parse(line) as ModelCallEntry);
      },
    };
  }, 120_000);

  afterAll(async () => {
    // Teardown never depends on the test passing; each step runs whatever failed before it.
    await nc?.close().catch(() => undefined);
    await cluster?.stop().catch(() => undefined);
    await Promise.allSettled([witness?.close(), db?.drop()]);
    if (logDir) await rm(logDir, { recursive: true, force: true });
  }, 60_000);

  return () => {
    if (!current) throw new Error('useDuraCluster(): only available inside tests, after beforeAll');
    return current;
  };
}

/** `steps` charges alternating pay.checked and pay.charge; the witness holds each answer `delayMs(step)` ms. */
export function chargePlan(runId: string, steps: number, delayMs: (step: number) => number): PlanRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: Array.from({ length: steps }, (_, i) => ({
        tool: i % 2 === 0 ? 'pay.checked' : 'pay.charge',
        args: { amount: (i + 1) * 100, delayMs: delayMs(i + 1) },
      })),
    },
  };
}

export interface WatchedRun {
  events: RunEvent[];
  /** Submit to terminal event, ms, as the follower saw it. */
  ms: number;
  /** The longest time between two consecutive events of the run (their `meta.ts`), ms. */
  longestGapMs: number;
}

/**
 * Follows a submitted run until its terminal event by reading the log's tail (one direct get per event)
 * every `pollMs` (default 250). A read that fails while the cluster elects a leader is simply asked again; this keeps the
 * observer free of consumers, which a lost node takes with it. Resolves with what it saw, terminal or not.
 */
export async function followRun(
  sys: ClusterSystem,
  runId: string,
  timeoutMs: number,
  pollMs = 250,
  /** Time the test itself held the run back (answers it kept), added to `timeoutMs` as it becomes known. */
  heldMs: () => number = () => 0,
): Promise<WatchedRun> {
  const began = performance.now();
  const store = createEventStore(sys);
  const events: RunEvent[] = [];
  while (performance.now() - began < timeoutMs + heldMs()) {
    try {
      events.push(...(await store.readTail(runId, { fromSeq: (events.at(-1)?.seq ?? 0) + 1 })));
    } catch {
      // Timeouts and "no responders" while a leader is elected: the next poll asks again.
    }
    const last = events.at(-1);
    if (last && TERMINAL_EVENTS.has(last.type)) break;
    await sleep(pollMs);
  }
  const times = events.map((event) => Date.parse(event.meta.ts));
  const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
  return { events, ms: Math.round(performance.now() - began), longestGapMs: Math.max(0, ...gaps) };
}

/** The exact log of a scripted plan of `steps` calls that completed: nothing missing, nothing twice. */
export function expectedTypes(steps: number): string[] {
  const perStep = ['thought', 'tool_call_requested', 'tool_call_completed'];
  return [
    'run_requested',
    'run_started',
    ...Array.from({ length: steps }, () => perStep).flat(),
    'thought',
    'run_completed',
  ];
}

/**
 * A completed run, checked from outside: its log (read from the stream) is the full plan once, in order;
 * each key charged exactly once at the witness and no other key of the run reached it; the projector's
 * state equals the fold of the log and its event list equals the log.
 */
export async function expectRunIntact(sys: ClusterSystem, request: PlanRequest): Promise<RunEvent[]> {
  const runId = request.runId;
  const steps = request.agent.kind === 'scripted' ? request.agent.steps.length : 0;
  const log = await createEventStore(sys).read(runId);
  expect(
    log.map((e) => e.type),
    `the log of ${runId}`,
  ).toEqual(expectedTypes(steps));
  expect(new Set(log.map((e) => e.meta.id)).size, `event ids of ${runId} are unique`).toBe(log.length);
  const state = fold(log);
  expect(state.status).toBe('completed');

  const requested = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
  for (const call of requested) {
    expect(sys.witness.effects(call.idempotencyKey), `effects of ${call.idempotencyKey}`).toBe(1);
    if (call.tool === 'pay.checked')
      expect(sys.witness.requests(call.idempotencyKey), `requests of ${call.idempotencyKey}`).toBe(1);
  }
  const witnessed = sys.witness.keys().filter((key) => key.startsWith(`${runId}:`));
  expect(witnessed.sort()).toEqual(requested.map((c) => c.idempotencyKey).sort());

  const apiUrl = sys.cluster.apiUrl;
  const projected = await eventually(
    async () => {
      const { status, body } = await getJson(`${apiUrl}/runs/${runId}`);
      return status === 200 && (body as { lastSeq: number }).lastSeq === state.lastSeq ? body : undefined;
    },
    `the projection of ${runId} to reach seq ${state.lastSeq}`,
    30_000,
  );
  expect(projected).toEqual(JSON.parse(JSON.stringify(state)));
  const { body: page } = await getJson(`${apiUrl}/runs/${runId}/events?limit=1000`);
  expect((page as { events: RunEvent[] }).events).toEqual(JSON.parse(JSON.stringify(log)));
  return log;
}

/** Model calls per (run, decision number) that were asked more than once. */
export function repeatedModelCalls(calls: readonly ModelCallEntry[]): string[] {
  const counts = new Map<string, number>();
  for (const call of calls) {
    const key = `${call.runId}#${call.decisions}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n > 1).map(([key, n]) => `${key}×${n}`);
}

/** Scrapes a Prometheus endpoint; the result sums the samples of `name` whose labels include `labels`. */
export async function scrape(
  url: string,
): Promise<(name: string, labels?: Record<string, string>) => number> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
  const samples = (await response.text())
    .split('\n')
    .filter((line) => line.length > 0 && !line.startsWith('#'))
    .flatMap((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
      if (!match) return [];
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
      );
      return [{ name: match[1] as string, labels, value: Number(match[3]) }];
    });
  return (name, labels = {}) =>
    samples
      .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
}

/**
 * What a test needs to see when runs did not finish: each one's last events, the task stream, the durable
 * consumers' backlogs, and what the replicas warned about.
 */
export async function stallReport(sys: ClusterSystem, runIds: readonly string[]): Promise<string> {
  const lines: string[] = [];
  const store = createEventStore(sys);
  for (const runId of runIds) {
    const log = await store.read(runId).catch((err: Error) => err);
    lines.push(
      log instanceof Error
        ? `${runId}: cannot read its log (${log.message})`
        : `${runId}: ${log
            .slice(-3)
            .map((e) => `#${e.seq} ${e.type}`)
            .join(', ')}`,
    );
  }
  for (const stream of ['DURA_TASKS', 'DURA_RUNS', 'DURA_DLQ']) {
    const info = await sys.jsm.streams.info(stream).catch((err: Error) => err);
    lines.push(
      info instanceof Error
        ? `${stream}: ${info.message}`
        : `${stream}: ${info.state.messages} messages, last seq ${info.state.last_seq}, leader ${info.cluster?.leader}`,
    );
    if (info instanceof Error) continue;
    for await (const consumer of sys.jsm.consumers.list(stream))
      lines.push(
        `  ${consumer.name}: pending ${consumer.num_pending}, ack pending ${consumer.num_ack_pending}, ` +
          `redelivered ${consumer.num_redelivered}, leader ${consumer.cluster?.leader}`,
      );
  }
  for (const replica of sys.cluster.replicas) {
    const warnings = replica.proc
      .output()
      .split('\n')
      .filter((line) => /"level":"(warn|error)"/.test(line));
    lines.push(
      `${replica.label}: ${warnings.length} warnings/errors`,
      ...warnings.slice(-8).map((w) => `  ${w.slice(0, 400)}`),
    );
  }
  return lines.join('\n');
}

/**
 * After a fault: every run completed with a whole log, each key charged once, nothing dead-lettered, every NATS
 * node holds the run log the leader holds, and no replica crashed.
 */
export async function expectClusterWhole(
  sys: ClusterSystem,
  requests: readonly PlanRequest[],
  runs: readonly WatchedRun[],
  chargesPerRun: number,
): Promise<void> {
  const { cluster, jsm, witness } = sys;
  const unfinished = requests.filter((_, i) => runs[i]?.events.at(-1)?.type !== 'run_completed');
  if (unfinished.length > 0)
    expect.fail(`runs did not complete:\n${await stallReport(sys, unfinished.map((r) => r.runId))}`);
  for (const request of requests) await expectRunIntact(sys, request);
  const charges = requests.length * chargesPerRun;
  expect(witness.totals()).toMatchObject({ effects: charges, keys: charges });
  expect((await jsm.streams.info(STREAMS.deadLetters)).state.messages, 'nothing dead-lettered').toBe(0);

  // No event lost at the replica level either: every node holds the log the leader holds.
  const logOnLeader = (await jsm.streams.info(STREAMS.runs)).state;
  await eventually(
    async () => {
      const states = await Promise.all(cluster.nats.nodes.map((_, i) => cluster.nats.streamState(i, STREAMS.runs)));
      const caughtUp = states.every((s) => s?.lastSeq === logOnLeader.last_seq && s.messages === logOnLeader.messages);
      return caughtUp ? states : undefined;
    },
    `every node to hold ${STREAMS.runs} up to seq ${logOnLeader.last_seq}`,
    30_000,
  );
  expect(cluster.unexpectedExits(), 'no replica crashed').toEqual([]);
}

/** A stream's leader, asked until the cluster answers (the test's own connection may be reconnecting). */
export function leaderOf(jsm: JetStreamManager, stream: string): Promise<string> {
  return eventually(
    async () => (await jsm.streams.info(stream)).cluster?.leader || undefined,
    `stream ${stream} to report a leader`,
    30_000,
  );
}
