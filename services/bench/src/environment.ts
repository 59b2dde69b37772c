import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { STREAMS } from '@dura/contracts';
import { DEFAULT_STREAM_OPTIONS, ensureStreams, streamConfigs } from '@dura/event-store';
import { repoRoot } from '@dura/testing';
import { openDeployment } from './deployment';
import { childPids } from './proc-stats';
import type { BenchReport } from './schema';

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot(), encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], {
      cwd: repoRoot(),
      encoding: 'utf8',
    }).trim();
    return dirty ? `${head}+dirty` : head;
  } catch {
    return 'unknown';
  }
}

function benchVersion(): string {
  const url = new URL('../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}

/**
 * When JetStream fsyncs its files: `sync_interval` (or `sync`) from the config file the server was started
 * with, when set; otherwise the server's default for its version. nats-server 2.9 has no such setting: its
 * file store syncs every 2 minutes, so an acknowledged publish is in the OS page cache (safe from a process
 * crash, not from a power loss); 2.10+ defaults to the same 2 minutes unless `sync_interval: always`.
 */
export function jetstreamSyncSetting(version: string, cmdline: readonly string[]): string {
  const at = cmdline.findIndex((arg) => arg === '-c' || arg === '--config');
  const file = at >= 0 ? cmdline[at + 1] : undefined;
  if (file) {
    try {
      const set = /^\s*(sync_interval|sync)\s*[:=]\s*("?)([^"\s]+)\2/m.exec(readFileSync(file, 'utf8'));
      if (set) return `${set[1]}: ${set[3]} (config ${file})`;
    } catch {
      return `unknown (config ${file} unreadable)`;
    }
  }
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major === 2 && minor < 10
    ? `not settable on nats-server ${version}: files synced every 2 min (an ack means the OS page cache)`
    : 'sync_interval not set: server default (every 2 min; an ack means the OS page cache)';
}

function cmdlineOf(pid: number | undefined): string[] {
  if (pid === undefined) return [];
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

export type Environment = Pick<BenchReport, 'machine' | 'versions' | 'durability'>;

/** See `machine.speed` in the report schema. */
export function speedProbe(): { cpuMs: number; writeUs: number } {
  const event = {
    type: 'tool_call_completed',
    v: 1,
    data: { callId: 'call-7', step: 7, tool: 'echo', result: { text: 'x'.repeat(200), n: [1, 2, 3] } },
    meta: { id: 'run-1:7:0', runId: 'run-1', ts: new Date(0).toISOString(), correlationId: 'run-1' },
  };
  const median = (samples: number[]): number => samples.sort((a, b) => a - b)[2] as number;
  const cpu: number[] = [];
  const write: number[] = [];
  const fd = openSync('/dev/null', 'w');
  try {
    for (let round = 0; round < 5; round += 1) {
      let began = performance.now();
      let bytes = 0;
      for (let i = 0; i < 5_000; i += 1)
        bytes += (JSON.parse(JSON.stringify(event)) as typeof event).data.step;
      cpu.push(performance.now() - began + (bytes < 0 ? 1 : 0));
      const byte = Buffer.from('x');
      began = performance.now();
      for (let i = 0; i < 2_000; i += 1) writeSync(fd, byte);
      write.push(((performance.now() - began) * 1000) / 2_000);
    }
  } finally {
    closeSync(fd);
  }
  return { cpuMs: Math.round(median(cpu) * 100) / 100, writeUs: Math.round(median(write) * 100) / 100 };
}

/** The machine, the versions and the durability settings in force, read from a deployment like the scenarios'. */
export async function probeEnvironment(): Promise<Environment> {
  await using deployment = await openDeployment('probe');
  await ensureStreams(deployment.jsm, DEFAULT_STREAM_OPTIONS);
  const loadAverageAtStart = loadavg().map((x) => Math.round(x * 100) / 100) as [number, number, number];
  // The streams every service ensures (DURA_EVENTS is the planner's, for event triggers; the bench has none).
  const streams = await Promise.all(
    streamConfigs(DEFAULT_STREAM_OPTIONS).map(({ name }) => deployment.jsm.streams.info(name)),
  );
  const jetstreamStreams = Object.fromEntries(
    streams.map((info) => [
      info.config.name,
      { storage: info.config.storage, replicas: info.config.num_replicas },
    ]),
  );
  const runs = streams.find((info) => info.config.name === STREAMS.runs);
  if (!runs) throw new Error(`stream ${STREAMS.runs} is missing after ensureStreams`);
  const natsVersion = deployment.nc.info?.version ?? 'unknown';
  const [pg] = await deployment.sql<{ server_version: string }[]>`show server_version`;
  const [sync] = await deployment.sql<{ synchronous_commit: string }[]>`show synchronous_commit`;
  const [fsync] = await deployment.sql<{ fsync: string }[]>`show fsync`;
  return {
    machine: {
      cores: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
      os: `${platform()} ${release()}`,
      loadAverageAtStart,
      speed: speedProbe(),
    },
    versions: {
      node: process.version,
      natsServer: natsVersion,
      postgres: pg?.server_version ?? 'unknown',
      bench: benchVersion(),
      gitCommit: gitCommit(),
    },
    durability: {
      jetstreamStorage: `${runs.config.storage} (${STREAMS.runs}, replicas ${runs.config.num_replicas})`,
      jetstreamStreams,
      jetstreamSync: jetstreamSyncSetting(natsVersion, cmdlineOf(childPids('nats-server')[0])),
      postgresSynchronousCommit: sync?.synchronous_commit ?? 'unknown',
      postgresFsync: fsync?.fsync ?? 'unknown',
    },
  };
}
