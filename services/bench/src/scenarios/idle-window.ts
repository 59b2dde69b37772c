// An idle window over a deployment: CPU and RSS of every service process and the nats-server, and the CPU of
// the Postgres backends serving its database, from /proc at the window's start and end (I and O).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Deployment } from '../deployment';
import { childPids, sampleProcess } from '../proc-stats';
import type { BenchScenarios } from '../schema';
import { round } from '../stats';

type Waits = NonNullable<BenchScenarios['waits']>;

export interface IdleWindow {
  processes: Waits['processes'];
  postgres: Waits['postgres'];
}

/** Pids of the Postgres backends serving this deployment's database (the services' pools and the bench's). */
async function databaseBackends(deployment: Deployment): Promise<number[]> {
  const rows = await deployment.sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = current_database()`;
  return rows.map((r) => r.pid);
}

function cpuOf(pids: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      out.set(pid, sampleProcess(pid).cpuSeconds);
    } catch {
      // Not ours to read, or ended.
    }
  }
  return out;
}

/** Sleeps `seconds` and says what each service process and the nats-server spent meanwhile. */
export async function measureProcesses(
  deployment: Deployment,
  seconds: number,
): Promise<IdleWindow['processes']> {
  const watched = [
    ...deployment.services.map((s) => ({ name: s.label, pid: s.proc.pid })),
    ...childPids('nats-server').map((pid) => ({ name: 'nats-server', pid })),
  ];
  const start = watched.map((w) => sampleProcess(w.pid));
  await sleep(seconds * 1000);
  const end = watched.map((w) => sampleProcess(w.pid));
  return watched.map((w, i) => {
    const cpuSeconds = round(Math.max(0, (end[i]?.cpuSeconds ?? 0) - (start[i]?.cpuSeconds ?? 0)));
    return {
      ...w,
      rssStartMiB: start[i]?.rssMiB ?? 0,
      rssEndMiB: end[i]?.rssMiB ?? 0,
      cpuSeconds,
      cpuShare: round(cpuSeconds / seconds),
    };
  });
}

/** Sleeps `seconds` and says what each process spent meanwhile (nothing of the bench's own is counted). */
export async function measureIdleWindow(deployment: Deployment, seconds: number): Promise<IdleWindow> {
  const backends = await databaseBackends(deployment);
  const pgStart = cpuOf(backends);
  const processes = await measureProcesses(deployment, seconds);
  const pgEnd = cpuOf(backends);
  const pgCpu = [...pgStart].reduce((sum, [pid, cpu]) => sum + Math.max(0, (pgEnd.get(pid) ?? cpu) - cpu), 0);
  return {
    processes,
    postgres: { backends: pgStart.size, cpuSeconds: round(pgCpu), cpuShare: round(pgCpu / seconds) },
  };
}
