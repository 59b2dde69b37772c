import { readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process has used so far, and its resident set in MiB, from /proc. */
export function sampleProcess(pid: number): { cpuSeconds: number; rssMiB: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after "pid (comm) ": state is field 3, utime 14 and stime 15 (1-based).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  return { cpuSeconds: ticks / TICKS_PER_SECOND, rssMiB: Math.round((rssKiB / 1024) * 10) / 10 };
}

/** Pids of this process's children whose command name is `comm` (e.g. the nats-server it spawned). */
export function childPids(comm: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && name === comm) found.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

/** Pids of every process on the machine whose command name is `comm` (e.g. all Postgres backends). */
export function pidsNamed(comm: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === comm) found.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

/** CPU seconds of each process of each named group, by pid; a process that has ended is left out. */
export function cpuByGroup(groups: Record<string, readonly number[]>): Record<string, Map<number, number>> {
  const out: Record<string, Map<number, number>> = {};
  for (const [name, pids] of Object.entries(groups)) {
    const byPid = new Map<number, number>();
    for (const pid of pids) {
      try {
        byPid.set(pid, sampleProcess(pid).cpuSeconds);
      } catch {
        // Ended while we looked.
      }
    }
    out[name] = byPid;
  }
  return out;
}

/**
 * CPU seconds each group used between two samples, over the processes alive at both: a backend that exited
 * in between (Postgres closes idle connections) must not count as negative CPU.
 */
export function cpuSpent(
  before: Record<string, Map<number, number>>,
  after: Record<string, Map<number, number>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, later] of Object.entries(after)) {
    let sum = 0;
    for (const [pid, seconds] of later) {
      const earlier = before[name]?.get(pid);
      if (earlier !== undefined) sum += Math.max(0, seconds - earlier);
    }
    out[name] = sum;
  }
  return out;
}
