// `npm run cluster`: the system multi-replica on this machine (see cluster/dura-cluster.ts).
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { createDuraClient, type SubmitRunInput } from '@dura/client';
import { DuraError } from '@dura/contracts';
import { openNatsConnection } from '@dura/event-store';
import { redact } from '@dura/db';
import {
  DEFAULT_CLUSTER_DATABASE_URL,
  openClusterDatabase,
  type ClusterDatabase,
} from './cluster/cluster-database';
import { startDuraCluster, type DuraCluster } from './cluster/dura-cluster';
import { formatEvent } from './format-event';

const HELP = `npm run cluster: Dura multi-replica on this machine, the local stand-in for Kubernetes.
A 3-node NATS cluster (three nats-server processes on loopback, R3 streams), then 1 projector,
3 tool gateways and 2 planners, each its own process.

Usage: npm run cluster -- [--planners N] [--gateways N] [--projectors N] [--database NAME] [--once FILE]

  --planners N     planner replicas (default 2)
  --gateways N     tool-gateway replicas (default 3)
  --projectors N   projector replicas (default 1)
  --database NAME  use (and keep) this database instead of a fresh dura_cluster_<timestamp>
  --once FILE      submit the run request in FILE, print its events, stop when it ends
                   (exit code 0 if it completed)
Environment: DATABASE_URL (the Postgres server; default ${DEFAULT_CLUSTER_DATABASE_URL}),
DURA_CLUSTER_DIR (keep the NATS stores, and the database, here between starts; default a temp dir),
NATS_SERVER_BIN; anything else (DURA_TOOLS_MODULES, DURA_AGENTS, LOG_LEVEL, ...) reaches every replica.`;

/** The examples' agents, served by default as `npm run dev` does. */
const DEFAULT_AGENTS = 'examples/agents/agents.json';

function count(raw: string | undefined, flag: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 16)
    throw new DuraError('bad_flag', `${flag} takes a whole number from 0 to 16, got "${raw}"`);
  return value;
}

const began = performance.now();
function progress(line: string): void {
  const seconds = ((performance.now() - began) / 1000).toFixed(1).padStart(5);
  process.stdout.write(`[${seconds}s] ${line}\n`);
}

async function runOnce(cluster: DuraCluster, file: string): Promise<number> {
  const request = JSON.parse(readFileSync(file, 'utf8')) as SubmitRunInput;
  // As an application would: the least-privilege client user.
  const nc = await openNatsConnection({
    url: cluster.nats.servers,
    name: 'dura-cluster-once',
    security: cluster.users.securityOf('client'),
    connect: { maxReconnectAttempts: -1 },
  });
  try {
    const client = createDuraClient({
      js: jetstream(nc),
      jsm: await jetstreamManager(nc),
      apiUrl: cluster.apiUrl,
    });
    const { runId } = await client.submitRun(request);
    progress(`submitted ${runId} from ${file}; its events, live:`);
    let last = 'unknown';
    for await (const event of client.watchRun(runId)) {
      process.stdout.write(`${formatEvent(event)}\n`);
      last = event.type;
    }
    progress(`${runId}: ${last}. State: ${cluster.apiUrl}/runs/${runId}`);
    return last === 'run_completed' ? 0 : 1;
  } finally {
    await nc.close();
  }
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((done) => {
    const first = (signal: NodeJS.Signals) => {
      // A second Ctrl-C does not wait for the drain; the children are SIGKILLed as this process exits.
      process.once('SIGINT', () => process.exit(130));
      done(signal);
    };
    process.once('SIGINT', first);
    process.once('SIGTERM', first);
  });
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      planners: { type: 'string' },
      gateways: { type: 'string' },
      projectors: { type: 'string' },
      database: { type: 'string' },
      once: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const planners = count(values.planners, '--planners', 2);
  const gateways = count(values.gateways, '--gateways', 3);
  const projectors = count(values.projectors, '--projectors', 1);
  const onceFile = values.once === undefined ? undefined : resolve(values.once);
  if (onceFile !== undefined && (planners === 0 || gateways === 0 || projectors === 0))
    throw new DuraError('bad_flag', '--once needs at least one planner, gateway and projector');
  if (onceFile !== undefined && !existsSync(onceFile))
    throw new DuraError('bad_flag', `--once ${values.once}: no such file`);
  const keepDir = process.env['DURA_CLUSTER_DIR'] || undefined;

  const server = process.env['DATABASE_URL'] || DEFAULT_CLUSTER_DATABASE_URL;
  progress(`opening Postgres at ${redact(server)}…`);
  const database: ClusterDatabase = await openClusterDatabase(server, values.database);
  progress(`  postgres  ${redact(database.url)}${database.fresh ? ' (new)' : ''}`);
  let cluster: DuraCluster | undefined;
  try {
    cluster = await startDuraCluster({
      databaseUrl: database.url,
      planners,
      gateways,
      projectors,
      ...(keepDir ? { natsDir: resolve(keepDir) } : {}),
      env: process.env['DURA_AGENTS'] || !existsSync(DEFAULT_AGENTS) ? {} : { DURA_AGENTS: DEFAULT_AGENTS },
      progress,
    });
    progress(`ready: NATS_URL=${cluster.nats.servers}`);
    if (projectors > 0) progress(`       runs: ${cluster.apiUrl}/runs`);
    if (onceFile !== undefined) return await runOnce(cluster, onceFile);
    // A local cluster's throwaway password: printed so a developer can connect as the least-privilege client.
    const client = cluster.users.securityOf('client');
    if (client.auth.kind === 'user')
      progress(
        `       client: NATS_USER=client NATS_PASSWORD=${client.auth.password} NATS_INBOX_PREFIX=${client.inboxPrefix ?? ''}`,
      );
    progress(
      'running; submit runs with the client SDK or the dura CLI (NATS_URL and client above); Ctrl-C to stop.',
    );
    const signal = await untilSignal();
    progress(`${signal}: stopping every replica (they drain), then NATS…`);
    return 0;
  } finally {
    await cluster?.stop();
    if (database.fresh && !keepDir) await database.drop();
    else
      progress(`kept database ${database.name}; next time: npm run cluster -- --database ${database.name}`);
    progress('stopped.');
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof DuraError ? `npm run cluster: ${err.message}` : err);
    process.exit(1);
  },
);
