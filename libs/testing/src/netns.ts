// A private network on this machine for partition faults: each host is a network namespace (`ip netns`) with
// its own address on a bridge the test creates, reachable from the test's own namespace. A host is partitioned
// by taking its link down, and made slow or lossy with `tc` (tbf, or netem where the kernel has it). Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN).
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { onProcessExit } from './exit-hooks';

const run = promisify(execFile);

/** Where subnets in use are claimed (one directory each, made atomically), so labs side by side never share one. */
const CLAIMS = join(tmpdir(), 'dura-netlab');

/**
 * How a host's link misbehaves, both ways: a bandwidth cap (`tc tbf`: queued packets wait, and those that
 * would wait longer than `queueMs` are dropped), or delay and loss (`tc netem`, where the kernel has it).
 */
export interface LinkFaults {
  /** Bandwidth cap, kbit/s. */
  rateKbit?: number;
  /** With `rateKbit`: the longest a packet queues before it is dropped (default 500 ms). */
  queueMs?: number;
  /** Added to every packet, ms. */
  delayMs?: number;
  /** Random extra delay up to this, ms. */
  jitterMs?: number;
  /** Packets dropped, percent (0-100). */
  lossPercent?: number;
}

/** One host of the lab: a network namespace with one address on the lab's bridge. */
export interface LabHost {
  readonly name: string;
  /** The network namespace's name (`ip netns exec <ns> …`). */
  readonly namespace: string;
  /** The host's address; the test's own namespace reaches it directly. */
  readonly address: string;
  /** `command args…` as run inside the host: what to give a process spawner. */
  command(command: string, args: readonly string[]): { command: string; args: string[] };
  /** Cuts the host off: nothing goes in or out (open connections hang, as in a real partition). */
  partition(): Promise<void>;
  /** Makes the host's link slow or lossy; `heal()` undoes it. */
  degrade(faults: LinkFaults): Promise<void>;
  /** Link up, faults gone. */
  heal(): Promise<void>;
  readonly partitioned: boolean;
}

export interface NetworkLab {
  /** The lab's address in the test's own namespace (the bridge). */
  readonly gateway: string;
  readonly hosts: readonly LabHost[];
  /** A new host (namespace, veth on the bridge, loopback up). */
  addHost(name: string): Promise<LabHost>;
  /** Removes every host and the bridge. */
  close(): Promise<void>;
}

async function ip(args: string[]): Promise<void> {
  try {
    await run('ip', args);
  } catch (err) {
    const detail = ((err as { stderr?: string }).stderr ?? (err as Error).message).trim();
    throw new Error(
      `ip ${args.join(' ')} failed (${detail}): a partition nemesis needs root (CAP_NET_ADMIN) and iproute2`,
    );
  }
}

async function tc(namespace: string | undefined, args: string[]): Promise<void> {
  const full = namespace ? ['netns', 'exec', namespace, 'tc', ...args] : args;
  try {
    await run(namespace ? 'ip' : 'tc', full);
  } catch (err) {
    const detail = ((err as { stderr?: string }).stderr ?? (err as Error).message).trim();
    throw new Error(
      `tc ${args.join(' ')} failed (${detail}): tc needs root, and delay or loss the kernel's sch_netem module ` +
        '(a kernel without it can still cap bandwidth: degrade({ rateKbit }))',
    );
  }
}

function qdiscArgs(faults: LinkFaults): string[] {
  const netem = faults.delayMs !== undefined || faults.lossPercent !== undefined;
  if (faults.rateKbit !== undefined && netem)
    throw new Error('degrade() takes either rateKbit or delayMs/jitterMs/lossPercent, not both');
  if (faults.rateKbit !== undefined)
    return ['tbf', 'rate', `${faults.rateKbit}kbit`, 'burst', '4kb', 'latency', `${faults.queueMs ?? 500}ms`];
  const args = ['netem'];
  if (faults.delayMs !== undefined)
    args.push('delay', `${faults.delayMs}ms`, ...(faults.jitterMs ? [`${faults.jitterMs}ms`] : []));
  if (faults.lossPercent !== undefined) args.push('loss', `${faults.lossPercent}%`);
  if (args.length === 1)
    throw new Error('degrade() takes rateKbit, delayMs, jitterMs or lossPercent; got none');
  return args;
}

/** Claims a free 10.x.y.0/24 for this lab; returns its first three octets. */
function claimSubnet(): { prefix: string; release: () => void } {
  mkdirSync(CLAIMS, { recursive: true });
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const bytes = randomBytes(2);
    const prefix = `10.${200 + ((bytes[0] ?? 0) % 50)}.${bytes[1] ?? 0}`;
    const dir = join(CLAIMS, prefix);
    try {
      mkdirSync(dir);
      return { prefix, release: () => rmSync(dir, { recursive: true, force: true }) };
    } catch {
      // Taken by another lab: try another.
    }
  }
  throw new Error(`no free 10.200-249.x.0/24 subnet for a network lab (claims in ${CLAIMS})`);
}

/** Creates the lab's bridge; hosts are added with `addHost`. */
export async function createNetworkLab(): Promise<NetworkLab> {
  const id = randomBytes(3).toString('hex');
  const bridge = `dbr${id}`;
  const { prefix, release } = claimSubnet();
  const hosts: LabHost[] = [];
  const namespaces: string[] = [];
  const cleanupSync = () => {
    for (const ns of namespaces)
      try {
        execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
      } catch {
        // Gone already.
      }
    try {
      execFileSync('ip', ['link', 'del', bridge], { stdio: 'ignore' });
    } catch {
      // Gone already.
    }
    release();
  };
  const forget = onProcessExit(cleanupSync);
  try {
    await ip(['link', 'add', bridge, 'type', 'bridge']);
    await ip(['addr', 'add', `${prefix}.1/24`, 'dev', bridge]);
    await ip(['link', 'set', bridge, 'up']);
  } catch (err) {
    forget();
    cleanupSync();
    throw err;
  }

  const addHost = async (name: string): Promise<LabHost> => {
    const index = hosts.length;
    const namespace = `dura-${id}-${name}`;
    const outer = `dv${id}${index}`;
    const inner = `eth0`;
    const address = `${prefix}.${10 + index}`;
    namespaces.push(namespace);
    await ip(['netns', 'add', namespace]);
    await ip(['link', 'add', outer, 'type', 'veth', 'peer', 'name', `di${id}${index}`]);
    await ip(['link', 'set', `di${id}${index}`, 'netns', namespace]);
    await ip(['-n', namespace, 'link', 'set', `di${id}${index}`, 'name', inner]);
    await ip(['link', 'set', outer, 'master', bridge, 'up']);
    await ip(['-n', namespace, 'addr', 'add', `${address}/24`, 'dev', inner]);
    await ip(['-n', namespace, 'link', 'set', inner, 'up']);
    await ip(['-n', namespace, 'link', 'set', 'lo', 'up']);
    let partitioned = false;
    let degraded = false;
    const host: LabHost = {
      name,
      namespace,
      address,
      command: (command, args) => ({ command: 'ip', args: ['netns', 'exec', namespace, command, ...args] }),
      async partition() {
        partitioned = true;
        await ip(['link', 'set', outer, 'down']);
      },
      async degrade(faults) {
        const args = qdiscArgs(faults);
        await tc(undefined, ['qdisc', 'replace', 'dev', outer, 'root', ...args]);
        await tc(namespace, ['qdisc', 'replace', 'dev', inner, 'root', ...args]);
        degraded = true;
      },
      async heal() {
        if (degraded) {
          await tc(undefined, ['qdisc', 'del', 'dev', outer, 'root']).catch(() => undefined);
          await tc(namespace, ['qdisc', 'del', 'dev', inner, 'root']).catch(() => undefined);
          degraded = false;
        }
        await ip(['link', 'set', outer, 'up']);
        partitioned = false;
      },
      get partitioned() {
        return partitioned;
      },
    };
    hosts.push(host);
    return host;
  };

  return {
    gateway: `${prefix}.1`,
    hosts,
    addHost,
    async close() {
      forget();
      for (const ns of namespaces) await run('ip', ['netns', 'del', ns]).catch(() => undefined);
      await run('ip', ['link', 'del', bridge]).catch(() => undefined);
      release();
    },
  };
}
