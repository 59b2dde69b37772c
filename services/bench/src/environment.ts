import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, platform, release, totalmem } from 'node:os';
import { STREAMS } from '@dura/contracts';
import { DEFAULT_STREAM_OPTIONS, ensureStreams } from '@dura/event-store';
import { repoRoot } from '@dura/testing';
import { openDeployment } from './deployment';
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

export type Environment = Pick<BenchReport, 'machine' | 'versions' | 'durability'>;

/** The machine, the versions and the durability settings in force, read from a deployment like the scenarios'. */
export async function probeEnvironment(): Promise<Environment> {
  await using deployment = await openDeployment('probe');
  await ensureStreams(deployment.jsm, DEFAULT_STREAM_OPTIONS);
  const runs = await deployment.jsm.streams.info(STREAMS.runs);
  const [pg] = await deployment.sql<{ server_version: string }[]>`show server_version`;
  const [sync] = await deployment.sql<{ synchronous_commit: string }[]>`show synchronous_commit`;
  const [fsync] = await deployment.sql<{ fsync: string }[]>`show fsync`;
  return {
    machine: {
      cores: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
      os: `${platform()} ${release()}`,
    },
    versions: {
      node: process.version,
      natsServer: deployment.nc.info?.version ?? 'unknown',
      postgres: pg?.server_version ?? 'unknown',
      bench: benchVersion(),
      gitCommit: gitCommit(),
    },
    durability: {
      jetstreamStorage: `${runs.config.storage} (${STREAMS.runs}, replicas ${runs.config.num_replicas})`,
      jetstreamSync: 'server default (no sync_interval on 2.9)',
      postgresSynchronousCommit: sync?.synchronous_commit ?? 'unknown',
      postgresFsync: fsync?.fsync ?? 'unknown',
    },
  };
}
