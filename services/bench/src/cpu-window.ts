// CPU per process group over a measured window, counted per process tree (see cpu-accounting.ts for the
// method): a /proc snapshot at the window's start and at its end, and polls in between so the report can say
// which processes came and went (and, on a Postgres server shared with other databases, how much of its CPU
// other databases' backends were seen to spend).
import {
  otherDatabasesTicks,
  postgresDatabaseOf,
  subtree,
  treeCpu,
  type ProcSnapshot,
} from './cpu-accounting';
import { TICKS_PER_SECOND, parentOf, procSnapshot } from './proc-stats';

export interface CpuGroup {
  name: string;
  /** Root pids of the group's process trees (one per replica). */
  roots: number[];
  /**
   * `tree` (default): each root and all its descendants, live or reaped within the window. `self`: the root
   * process only (the bench driver, whose children are the services and the broker, accounted as their own).
   */
  scope?: 'tree' | 'self';
}

export interface PostgresTarget {
  /** The postmaster's pid on this machine. */
  postmaster: number;
  /** The database the measured deployment uses: backends of other databases are reported apart. */
  database: string;
}

export interface GroupWindow {
  /** CPU seconds the group spent within the window. */
  cpuSeconds: number;
  processesAtStart: number;
  processesAtEnd: number;
  /** Distinct processes of the group seen at the start, in any poll, or at the end. */
  processesSeen: number;
  /** Of those seen, how many were not there at the start, and how many were gone at the end. */
  startedWithin: number;
  endedWithin: number;
  /** CPU seconds of processes that ended within the window, read from their parents' reaped counters. */
  reapedCpuSeconds: number;
}

export interface CpuWindowResult {
  groups: Record<string, GroupWindow>;
  polls: number;
  pollMs: number;
  /** The Postgres server's whole tree, and what other databases' backends were seen to spend of it. */
  postgres?: {
    postmaster: number;
    serverCpuSeconds: number;
    otherDatabasesCpuSeconds: number;
    otherDatabaseBackends: number;
  };
}

export interface CpuWindow {
  /** Takes the end snapshot, stops polling and accounts the window. */
  close(): CpuWindowResult;
}

const POSTGRES = 'postgres';

/**
 * The postmaster of the server a backend runs in, when that server runs on this machine: the parent of
 * `backendPid`, checked to be a Postgres process whose child serves `database` (a server in a container or on
 * another host has pids of its own namespace, which must not be read as this machine's).
 */
export function localPostmaster(backendPid: number, database: string): number | undefined {
  const backend = procSnapshot().find((p) => p.pid === backendPid);
  if (!backend || backend.comm !== POSTGRES || postgresDatabaseOf(backend.title) !== database)
    return undefined;
  const parent = parentOf(backendPid);
  return parent !== undefined && parent > 1 ? parent : undefined;
}

/**
 * Starts a window: snapshots /proc now and every `pollMs` until `close()`. With `postgres`, the group named
 * `postgres` is the postmaster's whole tree (it replaces any `postgres` entry of `groups`), less what other
 * databases' backends were seen to spend.
 */
export function openCpuWindow(groups: CpuGroup[], postgres?: PostgresTarget, pollMs = 250): CpuWindow {
  const all: CpuGroup[] = [
    ...groups.filter((g) => !(postgres && g.name === POSTGRES)),
    ...(postgres ? [{ name: POSTGRES, roots: [postgres.postmaster] }] : []),
  ];
  const seen = new Map<string, Set<string>>(all.map((g) => [g.name, new Set()]));
  const membersOf = (group: CpuGroup, snapshot: ProcSnapshot) =>
    group.roots.flatMap((root) =>
      group.scope === 'self' ? snapshot.filter((p) => p.pid === root) : subtree(snapshot, root),
    );
  const keysOf = (group: CpuGroup, snapshot: ProcSnapshot) =>
    new Set(membersOf(group, snapshot).map((p) => `${p.pid}@${p.startTicks}`));
  const postgresSnapshots: ProcSnapshot[] = [];
  const note = (snapshot: ProcSnapshot) => {
    for (const group of all) {
      const set = seen.get(group.name) as Set<string>;
      for (const id of keysOf(group, snapshot)) set.add(id);
    }
    if (postgres) postgresSnapshots.push(subtree(snapshot, postgres.postmaster));
  };
  // The start and end snapshots must be consistent for every tree's root; the polls only list processes.
  const roots = all.filter((g) => g.scope !== 'self').flatMap((g) => g.roots);
  const start = procSnapshot(roots);
  note(start);
  let polls = 0;
  const timer = setInterval(() => {
    polls += 1;
    note(procSnapshot());
  }, pollMs);
  return {
    close() {
      clearInterval(timer);
      const end = procSnapshot(roots);
      note(end);
      const out: Record<string, GroupWindow> = {};
      for (const group of all) {
        // Started (ended) within: seen in the window but not in the start (end) snapshot, short-lived ones
        // caught by a poll included.
        const ever = seen.get(group.name) ?? new Set<string>();
        const atStart = keysOf(group, start);
        const atEnd = keysOf(group, end);
        const total: GroupWindow = {
          cpuSeconds: 0,
          processesAtStart: atStart.size,
          processesAtEnd: atEnd.size,
          processesSeen: ever.size,
          startedWithin: [...ever].filter((id) => !atStart.has(id)).length,
          endedWithin: [...ever].filter((id) => !atEnd.has(id)).length,
          reapedCpuSeconds: 0,
        };
        for (const root of group.roots) {
          const self = group.scope === 'self';
          const only = (s: ProcSnapshot) => (self ? s.filter((p) => p.pid === root) : s);
          const tree = treeCpu(only(start), only(end), root, { reaped: !self });
          total.cpuSeconds += tree.ticks / TICKS_PER_SECOND;
          total.reapedCpuSeconds += tree.reapedTicks / TICKS_PER_SECOND;
        }
        out[group.name] = total;
      }
      let postgresResult: CpuWindowResult['postgres'];
      if (postgres) {
        const server = out[POSTGRES] as GroupWindow;
        const other = otherDatabasesTicks(postgresSnapshots, postgres.postmaster, postgres.database);
        const otherSeconds = other.ticks / TICKS_PER_SECOND;
        postgresResult = {
          postmaster: postgres.postmaster,
          serverCpuSeconds: server.cpuSeconds,
          otherDatabasesCpuSeconds: otherSeconds,
          otherDatabaseBackends: other.backends,
        };
        server.cpuSeconds = Math.max(0, server.cpuSeconds - otherSeconds);
      }
      return { groups: out, polls, pollMs, ...(postgresResult ? { postgres: postgresResult } : {}) };
    },
  };
}
