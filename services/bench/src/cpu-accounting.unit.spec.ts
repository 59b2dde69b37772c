import { describe, expect, it } from 'vitest';
import { otherDatabasesTicks, postgresDatabaseOf, subtree, treeCpu, type ProcSample } from './cpu-accounting';

const POSTMASTER = 100;
const DB = 'dura_t_bench_runs_1';

function proc(
  pid: number,
  ppid: number,
  selfTicks: number,
  reapedTicks = 0,
  extra: Partial<ProcSample> = {},
) {
  return { pid, ppid, startTicks: pid * 10, selfTicks, reapedTicks, comm: 'postgres', ...extra };
}

const backend = (pid: number, selfTicks: number, database = DB) =>
  proc(pid, POSTMASTER, selfTicks, 0, {
    title: `postgres: 15/main: postgres ${database} 127.0.0.1(5${pid}) idle`,
  });

describe('treeCpu', () => {
  it('counts a live process by the difference of its own counters', () => {
    const start = [proc(POSTMASTER, 1, 50), backend(101, 20)];
    const end = [proc(POSTMASTER, 1, 55), backend(101, 80)];
    expect(treeCpu(start, end, POSTMASTER).ticks).toBe(5 + 60);
  });

  it('counts a backend that opened and closed within the window through the postmaster’s reaped counters', () => {
    const start = [proc(POSTMASTER, 1, 50, 1_000)];
    // Backend 102 lived between the snapshots, spent 40 ticks and was reaped: only cutime+cstime show it.
    const end = [proc(POSTMASTER, 1, 51, 1_040)];
    const live = treeCpu(start, end, POSTMASTER, { reaped: false }).ticks;
    const all = treeCpu(start, end, POSTMASTER);
    expect(live).toBe(1);
    expect(all.ticks).toBe(41);
    expect(all.reapedTicks).toBe(40);
  });

  it('counts only the in-window part of a backend open at the start and closed within the window', () => {
    // 101 had spent 300 ticks before the window, 25 more within it, then ended: 325 reach the reaped counters.
    const start = [proc(POSTMASTER, 1, 50, 0), backend(101, 300)];
    const end = [proc(POSTMASTER, 1, 50, 325)];
    const cpu = treeCpu(start, end, POSTMASTER);
    expect(cpu.ticks).toBe(25);
    expect(cpu.endedWithin).toBe(1);
  });

  it('counts all of a backend opened within the window and still open at its end', () => {
    const start = [proc(POSTMASTER, 1, 50)];
    const end = [proc(POSTMASTER, 1, 50), backend(103, 70)];
    const cpu = treeCpu(start, end, POSTMASTER);
    expect(cpu.ticks).toBe(70);
    expect(cpu.startedWithin).toBe(1);
  });

  it('tells a reused pid from the process that had it', () => {
    const start = [proc(POSTMASTER, 1, 50, 0), backend(101, 300)];
    // 101 ended (300 + 10 reaped), and a new process got pid 101 and spent 5 ticks.
    const end = [proc(POSTMASTER, 1, 50, 310), { ...backend(101, 5), startTicks: 99_999 }];
    const cpu = treeCpu(start, end, POSTMASTER);
    expect(cpu.ticks).toBe(10 + 5);
    expect(cpu.startedWithin).toBe(1);
    expect(cpu.endedWithin).toBe(1);
  });

  it('follows grandchildren and leaves out processes outside the tree and excluded subtrees', () => {
    const tree = (t: number) => [
      proc(1, 0, 0),
      proc(10, 1, t), // root
      proc(11, 10, t), // child
      proc(12, 11, t), // grandchild
      proc(20, 10, t), // excluded subtree
      proc(21, 20, t),
      proc(30, 1, t), // elsewhere on the machine
    ];
    const cpu = treeCpu(tree(1), tree(4), 10, { exclude: new Set([20]) });
    expect(cpu.ticks).toBe(3 * 3);
    expect(
      subtree(tree(1), 10)
        .map((p) => p.pid)
        .sort(),
    ).toEqual([10, 11, 12, 20, 21]);
  });

  it('counts nothing for a root that is gone or restarted under the same pid', () => {
    const start = [proc(POSTMASTER, 1, 50)];
    expect(treeCpu(start, [], POSTMASTER).ticks).toBe(0);
    expect(treeCpu(start, [{ ...proc(POSTMASTER, 1, 500), startTicks: 7 }], POSTMASTER).ticks).toBe(0);
  });
});

describe('postgresDatabaseOf', () => {
  it('reads the database of a backend and of an autovacuum worker, none for auxiliary processes', () => {
    expect(postgresDatabaseOf(`postgres: 15/main: postgres ${DB} 127.0.0.1(54022) idle`)).toBe(DB);
    expect(postgresDatabaseOf('postgres: app orders [local] SELECT')).toBe('orders');
    expect(postgresDatabaseOf('postgres: 15/main: autovacuum worker orders')).toBe('orders');
    expect(postgresDatabaseOf('postgres: 15/main: checkpointer')).toBeUndefined();
    expect(postgresDatabaseOf('postgres: 15/main: walwriter')).toBeUndefined();
    expect(
      postgresDatabaseOf('/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main'),
    ).toBeUndefined();
  });
});

describe('otherDatabasesTicks', () => {
  it('sums what other databases’ backends were seen to spend, from first to last sighting', () => {
    const snapshots = [
      [proc(POSTMASTER, 1, 0), backend(101, 10), backend(201, 100, 'other')],
      [proc(POSTMASTER, 1, 0), backend(101, 30), backend(201, 130, 'other'), backend(202, 7, 'other')],
      [proc(POSTMASTER, 1, 0), backend(101, 60), backend(202, 9, 'other')],
    ];
    // 201: 100 → 130 (then ended); 202: first seen within the window, 0 → 9; 101 is ours.
    expect(otherDatabasesTicks(snapshots, POSTMASTER, DB)).toEqual({ ticks: 30 + 9, backends: 2 });
  });
});
