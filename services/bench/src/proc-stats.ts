import { readFileSync, readdirSync } from 'node:fs';
import type { ProcSample, ProcSnapshot } from './cpu-accounting';

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

/** One process's /proc/<pid>/stat as a sample, or undefined once it has ended; `title` read when asked. */
function readSample(pid: number, withTitle: (comm: string) => boolean): ProcSample | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    // Fields after "pid (comm) " (1-based numbering of proc(5)): ppid 4, utime 14, stime 15, cutime 16,
    // cstime 17, starttime 22.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const num = (field: number) => Number(f[field - 3]);
    const sample: ProcSample = {
      pid,
      ppid: num(4),
      startTicks: num(22),
      selfTicks: num(14) + num(15),
      reapedTicks: num(16) + num(17),
      comm,
    };
    if (withTitle(comm)) {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      if (title) sample.title = title;
    }
    return sample;
  } catch {
    return undefined; // Ended while we looked.
  }
}

function scan(): ProcSample[] {
  const out: ProcSample[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const sample = readSample(Number(entry), (comm) => comm === 'postgres');
    if (sample) out.push(sample);
  }
  return out;
}

const SCAN_ATTEMPTS = 5;

/**
 * Every process on the machine now (pid, ppid, start time, own and reaped CPU), with the process title of
 * Postgres processes (it names the database a backend serves). Reading /proc is not atomic: a child reaped
 * while the scan runs could be counted twice (live, and in its parent's reaped times) or not at all. So the
 * reaped times of `stableRoots` (e.g. the postmaster) are read before and after the scan, and the scan is
 * repeated (up to 5 times) until none of them reaped a child meanwhile.
 */
export function procSnapshot(stableRoots: readonly number[] = []): ProcSnapshot {
  const reapedOf = () => stableRoots.map((pid) => readSample(pid, () => false)?.reapedTicks ?? -1).join(',');
  let out: ProcSample[] = [];
  for (let attempt = 1; attempt <= SCAN_ATTEMPTS; attempt += 1) {
    const before = reapedOf();
    out = scan();
    if (stableRoots.length === 0 || reapedOf() === before) break;
  }
  return out;
}

/** One live process as a sample (with its title when it is a Postgres process), or undefined once it ended. */
export function procSample(pid: number): ProcSample | undefined {
  return readSample(pid, (comm) => comm === 'postgres');
}

/** The parent pid of a live process (e.g. the postmaster of a backend), or undefined. */
export function parentOf(pid: number): number | undefined {
  return readSample(pid, () => false)?.ppid;
}

export { TICKS_PER_SECOND };
