// How much CPU a process tree spent over a window, from two /proc snapshots: pure, so it is unit-tested on
// synthetic snapshots (proc-stats.ts reads the real ones).
//
// Linux keeps two counters per process in /proc/<pid>/stat: its own CPU (utime + stime) and the CPU of the
// children it has reaped (cutime + cstime). When a child exits and its parent waits for it, the kernel adds
// the child's own CPU *and* its reaped children's CPU to the parent's cutime/cstime, so a process's
// `self + reaped` total moves up the tree when it ends and is never lost while the tree's root lives. The CPU a
// tree spent over a window is therefore
//
//   Σ over its processes alive at the end   (self + reaped)
// − Σ over its processes alive at the start (self + reaped)
//
// which counts, for example, a Postgres backend that opened and closed within the window (seen only through the
// postmaster's reaped counters), a backend that was open at the start and closed during it (its whole life
// enters the postmaster's reaped counters, its CPU before the window is subtracted with its start sample), and
// one opened during the window and still open at the end (its own counters, all spent within the window).
// Processes are matched by pid *and* start time, so a pid reused within the window is a different process.

/** One process in a /proc snapshot, CPU in clock ticks (USER_HZ). */
export interface ProcSample {
  pid: number;
  ppid: number;
  /** Start time after boot in ticks (`starttime`, field 22): with the pid, it names one process. */
  startTicks: number;
  /** utime + stime: CPU the process spent itself. */
  selfTicks: number;
  /** cutime + cstime: CPU of the children it has reaped (with their own reaped children). */
  reapedTicks: number;
  comm: string;
  /** Its command line as `ps` shows it (Postgres puts the role, database and state there), when read. */
  title?: string;
}

/** Every process on the machine at one instant. */
export type ProcSnapshot = readonly ProcSample[];

const key = (p: ProcSample) => `${p.pid}@${p.startTicks}`;

/**
 * The processes of the tree rooted at `root` in a snapshot: the root and every descendant, found by following
 * ppid, except the subtrees rooted at `exclude` (processes accounted elsewhere, e.g. the services the bench
 * driver spawned). Empty when the root is not in the snapshot.
 */
export function subtree(
  snapshot: ProcSnapshot,
  root: number,
  exclude: ReadonlySet<number> = new Set(),
): ProcSample[] {
  const children = new Map<number, ProcSample[]>();
  for (const p of snapshot) {
    if (p.pid === p.ppid) continue;
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const top = snapshot.find((p) => p.pid === root);
  if (!top) return [];
  const out: ProcSample[] = [];
  const stack = [top];
  while (stack.length > 0) {
    const p = stack.pop() as ProcSample;
    out.push(p);
    for (const child of children.get(p.pid) ?? []) if (!exclude.has(child.pid)) stack.push(child);
  }
  return out;
}

export interface TreeCpu {
  /** CPU ticks the tree spent within the window (never negative). */
  ticks: number;
  /** Processes of the tree at the start and at the end. */
  processesAtStart: number;
  processesAtEnd: number;
  /** Of those at the end, how many started within the window. */
  startedWithin: number;
  /** Of those at the start, how many ended within the window (their CPU came back through the reaped counters). */
  endedWithin: number;
  /** Ticks that reached the tree's reaped counters within the window: processes that ended. */
  reapedTicks: number;
}

/**
 * CPU a process tree spent between two snapshots. `reaped: false` counts the processes' own CPU only (for a
 * root whose children are accounted as their own groups, like the bench driver, whose reaped counters grow
 * when it stops the services it spawned).
 */
export function treeCpu(
  start: ProcSnapshot,
  end: ProcSnapshot,
  root: number,
  options: { reaped?: boolean; exclude?: ReadonlySet<number> } = {},
): TreeCpu {
  const reaped = options.reaped ?? true;
  const total = (p: ProcSample) => p.selfTicks + (reaped ? p.reapedTicks : 0);
  const before = subtree(start, root, options.exclude);
  const after = subtree(end, root, options.exclude);
  // Only this root's process counts: a root that restarted under the same pid is a different tree.
  const rootBefore = before.find((p) => p.pid === root);
  const rootAfter = after.find((p) => p.pid === root);
  const sameRoot = rootBefore && rootAfter && rootBefore.startTicks === rootAfter.startTicks;
  const beforeKeys = new Set(before.map(key));
  const afterKeys = new Set(after.map(key));
  const sum = (list: ProcSample[]) => list.reduce((acc, p) => acc + total(p), 0);
  const ticks = sameRoot ? Math.max(0, sum(after) - sum(before)) : 0;
  return {
    ticks,
    processesAtStart: before.length,
    processesAtEnd: after.length,
    startedWithin: after.filter((p) => !beforeKeys.has(key(p))).length,
    endedWithin: before.filter((p) => !afterKeys.has(key(p))).length,
    reapedTicks:
      sameRoot && reaped
        ? Math.max(
            0,
            after.reduce((a, p) => a + p.reapedTicks, 0) - before.reduce((a, p) => a + p.reapedTicks, 0),
          )
        : 0,
  };
}

/**
 * The database a Postgres backend serves, from its process title
 * (`postgres: [cluster: ]<role> <database> <host>(<port>) <state>` or `... [local] ...`); undefined for the
 * postmaster and the auxiliary processes (checkpointer, walwriter, autovacuum launcher, ...), which serve
 * the whole server.
 */
export function postgresDatabaseOf(title: string | undefined): string | undefined {
  if (!title) return undefined;
  const match = /^postgres: (?:\S+: )?\S+ (\S+) (?:\S+\(\d+\)|\[local\])/.exec(title);
  if (match) return match[1];
  const worker = /^postgres: (?:\S+: )?autovacuum worker (\S+)/.exec(title);
  return worker?.[1];
}

/**
 * CPU ticks the backends of databases other than `database` were seen to spend, over a series of snapshots
 * taken through the window (start, polls, end): each such backend counts from its first sighting (or its
 * start sample) to its last. A lower bound of what other tenants of a shared server cost in the window: a
 * backend's CPU after its last sighting, and backends that lived entirely between two polls, are not seen.
 */
export function otherDatabasesTicks(
  snapshots: readonly ProcSnapshot[],
  root: number,
  database: string,
): { ticks: number; backends: number } {
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  snapshots.forEach((snapshot, index) => {
    for (const p of subtree(snapshot, root)) {
      const db = postgresDatabaseOf(p.title);
      if (db === undefined || db === database) continue;
      const id = key(p);
      // A backend first seen after the start began within the window: all of its CPU is in it.
      if (!first.has(id)) first.set(id, index === 0 ? p.selfTicks : 0);
      last.set(id, p.selfTicks);
    }
  });
  let ticks = 0;
  for (const [id, at] of last) ticks += Math.max(0, at - (first.get(id) ?? 0));
  return { ticks, backends: last.size };
}
