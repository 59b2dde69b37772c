// A JetStream cluster of nats-server processes on loopback: what R3 streams, leader elections and a node
// lost mid-run look like, on one machine. Always local processes (DURA_TEST_INFRA does not apply).
// With `isolated`, each node runs in a network namespace of its own (see netns.ts), so a test can partition a
// node from the others and from its clients, or make its link slow and lossy, and heal it.
import { rmSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onProcessExit } from './exit-hooks';
import { findNatsServerBinary } from './local-nats-server';
import { spawnManaged, type ManagedProcess } from './managed-process';
import { createNetworkLab, type LabHost, type LinkFaults, type NetworkLab } from './netns';
import { freePort, waitForPort } from './ports';

export interface StartNatsClusterOptions {
  /** Number of nats-server processes (default 3). */
  nodes?: number;
  /** The cluster's name in `cluster { name }` (default "dura"). */
  name?: string;
  /** Keeps the store dirs here (one folder per node) and leaves them on stop; default a temp dir, removed. */
  dir?: string;
  /** How long to wait for JetStream to elect a meta leader, at start and after a restart (default 30 s). */
  readyTimeoutMs?: number;
  /** Appended to every node's config file, e.g. `include ./permissions.conf` and an `authorization` block. */
  extraConfig?: string;
  /** Copied next to every node's config file, so `extraConfig` can `include` them by name. */
  includeFiles?: string[];
  /**
   * Each node in a network namespace of its own, on a bridge this test creates (needs root): `partition`,
   * `degrade` and `heal` then work. Nodes are reached at their own addresses, not 127.0.0.1.
   */
  isolated?: boolean;
}

export interface NatsClusterNode {
  /** `server_name`, which JetStream reports as a stream's leader and replicas (n1, n2, ...). */
  readonly name: string;
  /** nats://127.0.0.1:<port> (nats://<its address>:<port> when isolated) */
  readonly url: string;
  readonly port: number;
  /** The route listener (`cluster { listen }`). */
  readonly clusterPort: number;
  /** http://127.0.0.1:<port> of the monitoring endpoint (/varz, /jsz, /healthz). */
  readonly monitorUrl: string;
  readonly storeDir: string;
  /** Whether the process is running (false between kill() and restart()). */
  readonly running: boolean;
}

/** A JetStream cluster owned by one spec file (or by `npm run cluster`). */
export interface NatsClusterHandle extends AsyncDisposable {
  readonly nodes: readonly NatsClusterNode[];
  /** Every node's client URL. */
  readonly urls: readonly string[];
  /** The same URLs comma-separated: the NATS_URL a client gives to connect to any node. */
  readonly servers: string;
  /** The index of the node whose `server_name` is `name` (a leader named by JetStream); throws if none. */
  indexOf(name: string): number;
  /** The current JetStream meta leader's name, asked of a running node's /jsz. */
  metaLeader(): Promise<string>;
  /** What node `i` itself stores of `stream` (its /jsz), or undefined when it is down or holds no replica. */
  streamState(i: number, stream: string): Promise<NodeStreamState | undefined>;
  /** Signals node `i` (default SIGKILL: a crash) and waits for its exit. */
  kill(i: number, signal?: NodeJS.Signals): Promise<void>;
  /** Starts node `i` again on its ports and store; resolves once it is ready and sees a meta leader. */
  restart(i: number): Promise<void>;
  /** Cuts node `i` off from the other nodes and every client (an `isolated` cluster only). */
  partition(i: number): Promise<void>;
  /** Makes node `i`'s link slow or lossy, both ways (an `isolated` cluster only). */
  degrade(i: number, faults: LinkFaults): Promise<void>;
  /** Undoes `partition` and `degrade` of node `i`, or of every node. */
  heal(i?: number): Promise<void>;
  /** Stops every node (SIGTERM) and removes the store dirs unless `dir` was given. */
  stop(): Promise<void>;
}

/** One node's own copy of a stream: replicas that caught up hold the same messages as the leader. */
export interface NodeStreamState {
  messages: number;
  firstSeq: number;
  lastSeq: number;
}

const PROCESS_READY_MS = 20_000;
const POLL_MS = 100;

interface NodeSpec {
  name: string;
  /** The address it listens on: 127.0.0.1, or its own in an isolated cluster. */
  host: string;
  port: number;
  clusterPort: number;
  httpPort: number;
  storeDir: string;
  configFile: string;
}

/** The config file of one node; every node lists every route, its own included (the server skips itself). */
function natsClusterNodeConfig(node: NodeSpec, clusterName: string, peers: readonly NodeSpec[]): string {
  const routes = peers.map((peer) => `    nats-route://${peer.host}:${peer.clusterPort}`).join('\n');
  return [
    `server_name: ${node.name}`,
    `listen: ${node.host}:${node.port}`,
    `http: ${node.host}:${node.httpPort}`,
    'jetstream {',
    `  store_dir: ${JSON.stringify(node.storeDir)}`,
    // 2.9 has no sync_interval. Production runs 2.10+ with `sync_interval: always`, so an acknowledged
    // publish is on disk at every replica; here an ack means "in the OS page cache of a quorum".
    '}',
    'cluster {',
    `  name: ${clusterName}`,
    `  listen: ${node.host}:${node.clusterPort}`,
    '  routes: [',
    routes,
    '  ]',
    '}',
    '',
  ].join('\n');
}

interface JszMeta {
  meta_cluster?: { leader?: string };
}

interface JszStreams {
  account_details?: {
    stream_detail?: { name: string; state: { messages: number; first_seq: number; last_seq: number } }[];
  }[];
}

async function streamStateOf(monitorUrl: string, stream: string): Promise<NodeStreamState | undefined> {
  try {
    const response = await fetch(`${monitorUrl}/jsz?accounts=true&streams=true`, {
      signal: AbortSignal.timeout(2_000),
    });
    if (!response.ok) return undefined;
    const body = (await response.json()) as JszStreams;
    const found = (body.account_details ?? [])
      .flatMap((account) => account.stream_detail ?? [])
      .find((detail) => detail.name === stream);
    if (!found) return undefined;
    return { messages: found.state.messages, firstSeq: found.state.first_seq, lastSeq: found.state.last_seq };
  } catch {
    return undefined;
  }
}

async function metaLeaderSeenBy(monitorUrl: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${monitorUrl}/jsz`, { signal: AbortSignal.timeout(1_000) });
    if (!response.ok) return undefined;
    const body = (await response.json()) as JszMeta;
    return body.meta_cluster?.leader || undefined;
  } catch {
    return undefined;
  }
}

/** Starts `nodes` nats-server processes routed to each other and waits until JetStream has a meta leader. */
export async function startNatsCluster(opts: StartNatsClusterOptions = {}): Promise<NatsClusterHandle> {
  const count = opts.nodes ?? 3;
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`nodes must be a positive integer, got ${count}`);
  const clusterName = opts.name ?? 'dura';
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  const bin = findNatsServerBinary();
  const baseDir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'dura-nats-cluster-')));
  const ownsDir = opts.dir === undefined;
  const forgetDir = ownsDir
    ? onProcessExit(() => rmSync(baseDir, { recursive: true, force: true }))
    : () => {};

  let lab: NetworkLab | undefined;
  const hosts: LabHost[] = [];
  const specs: NodeSpec[] = [];
  for (let i = 0; i < count; i += 1) {
    const name = `n${i + 1}`;
    const dir = join(baseDir, name);
    await mkdir(dir, { recursive: true });
    if (opts.isolated)
      try {
        lab ??= await createNetworkLab();
        hosts.push(await lab.addHost(name));
      } catch (error) {
        await lab?.close();
        throw error;
      }
    specs.push({
      name,
      host: hosts[i]?.address ?? '127.0.0.1',
      port: await freePort(),
      clusterPort: await freePort(),
      httpPort: await freePort(),
      storeDir: join(dir, 'store'),
      configFile: join(dir, 'nats.conf'),
    });
  }
  for (const spec of specs) {
    for (const file of opts.includeFiles ?? [])
      await copyFile(file, join(spec.configFile, '..', basename(file)));
    await writeFile(
      spec.configFile,
      natsClusterNodeConfig(spec, clusterName, specs) + (opts.extraConfig ?? ''),
    );
  }

  const procs: (ManagedProcess | undefined)[] = specs.map(() => undefined);
  const monitorUrl = (spec: NodeSpec) => `http://${spec.host}:${spec.httpPort}`;
  const alive = specs.map(() => false);
  const running = (i: number): boolean => alive[i] === true;

  const launch = async (i: number): Promise<void> => {
    const spec = specs[i] as NodeSpec;
    const { command, args } = hosts[i]?.command(bin, ['-c', spec.configFile]) ?? {
      command: bin,
      args: ['-c', spec.configFile],
    };
    const proc = spawnManaged({ name: `nats-${spec.name}:${spec.port}`, command, args });
    procs[i] = proc;
    alive[i] = true;
    void proc.exited.then(() => {
      if (procs[i] === proc) alive[i] = false;
    });
    try {
      await proc.waitForOutput(/Server is ready/, PROCESS_READY_MS);
      await waitForPort(spec.port, PROCESS_READY_MS, spec.host);
    } catch (error) {
      await proc.kill('SIGKILL');
      throw error;
    }
  };

  /** Resolves once every running node (or just `only`) names the same meta leader. */
  const waitForMetaLeader = async (only?: number): Promise<string> => {
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      const asked = specs.filter((_, i) => (only === undefined ? running(i) : i === only));
      const seen = await Promise.all(asked.map((spec) => metaLeaderSeenBy(monitorUrl(spec))));
      const first = seen[0];
      if (first !== undefined && seen.every((leader) => leader === first)) return first;
      if (Date.now() > deadline) {
        const report = asked.map((spec, k) => `${spec.name}: ${seen[k] ?? 'none'}`).join(', ');
        throw new Error(
          `the NATS cluster elected no JetStream meta leader within ${readyTimeoutMs} ms (${report}). ` +
            `Node output:\n${procs.map((p) => p?.output().slice(-1500) ?? '').join('\n---\n')}`,
        );
      }
      await sleep(POLL_MS);
    }
  };

  const stop = async (): Promise<void> => {
    await Promise.allSettled(procs.map((proc) => proc?.kill('SIGTERM') ?? Promise.resolve()));
    await lab?.close();
    if (ownsDir) {
      forgetDir();
      await rm(baseDir, { recursive: true, force: true });
    }
  };

  try {
    await Promise.all(specs.map((_, i) => launch(i)));
    await waitForMetaLeader();
  } catch (error) {
    await stop();
    throw error;
  }

  const check = (i: number): NodeSpec => {
    const spec = specs[i];
    if (spec === undefined) throw new Error(`the NATS cluster has nodes 0..${count - 1}, not ${i}`);
    return spec;
  };
  const hostOf = (i: number): LabHost => {
    check(i);
    const host = hosts[i];
    if (!host) throw new Error('partition, degrade and heal need a cluster started with { isolated: true }');
    return host;
  };
  const nodes: NatsClusterNode[] = specs.map((spec, i) => ({
    name: spec.name,
    url: `nats://${spec.host}:${spec.port}`,
    port: spec.port,
    clusterPort: spec.clusterPort,
    monitorUrl: monitorUrl(spec),
    storeDir: spec.storeDir,
    get running() {
      return running(i);
    },
  }));
  const urls = nodes.map((node) => node.url);
  return {
    nodes,
    urls,
    servers: urls.join(','),
    indexOf(name) {
      const i = specs.findIndex((spec) => spec.name === name);
      if (i < 0)
        throw new Error(
          `no node of the NATS cluster is named "${name}" (${specs.map((s) => s.name).join(', ')})`,
        );
      return i;
    },
    metaLeader: () => waitForMetaLeader(),
    streamState: (i, stream) => streamStateOf(monitorUrl(check(i)), stream),
    async kill(i, signal = 'SIGKILL') {
      check(i);
      await procs[i]?.kill(signal);
    },
    async restart(i) {
      check(i);
      await procs[i]?.kill('SIGTERM');
      await launch(i);
      await waitForMetaLeader(i);
    },
    partition: (i) => hostOf(i).partition(),
    degrade: (i, faults) => hostOf(i).degrade(faults),
    async heal(i) {
      await Promise.all((i === undefined ? hosts : [hostOf(i)]).map((host) => host.heal()));
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
