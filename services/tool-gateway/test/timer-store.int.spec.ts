import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'drizzle-orm';
import { timerTaskMsgId } from '@dura/contracts';
import { useTestInfra } from '@dura/testing';
import { createTimerStore, type FiredTimer } from '../src/timer-store';
import { outbox, timers } from '../src/index';
import { connect, prepare, timerTask, type Connections } from './support';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const TIMERS = 200;
const infra = useTestInfra();
let setup: Connections;
const firers: Connections[] = [];

beforeAll(async () => {
  setup = await prepare(infra().nats.url, infra().db.url);
  for (let i = 0; i < 3; i++) firers.push(await connect(infra().nats.url, infra().db.url, `firer-${i}`));
});

afterAll(async () => {
  await Promise.allSettled(firers.map((conn) => conn.close()));
  await setup?.close();
});

describe('the timer store', () => {
  it('never fires a timer twice when three replicas fire due timers at the same moment', async () => {
    const store = createTimerStore(setup.db, () => new Date());
    const past = new Date(Date.now() - 1_000);
    const tasks = Array.from({ length: TIMERS }, (_, i) => timerTask(`run-store-${i % 10}`, `w-${i}`, past));
    for (const task of tasks) expect(await store.schedule(task)).toBe(true);
    expect(await store.schedule(tasks[0]!)).toBe(false);
    const future = timerTask('run-store-future', 'w-future', new Date(Date.now() + 3_600_000));
    await store.schedule(future);
    expect(await store.pendingCount()).toBe(TIMERS + 1);

    // Small batches, so the replicas' passes overlap many times.
    const fireAll = async (conn: Connections): Promise<FiredTimer[]> => {
      const mine = createTimerStore(conn.db, () => new Date());
      const fired: FiredTimer[] = [];
      for (;;) {
        const batch = await mine.fireDue(7);
        if (batch.length === 0) return fired;
        fired.push(...batch);
      }
    };
    const byReplica = await Promise.all(firers.map(fireAll));

    const all = byReplica.flat().map((timer) => timer.msgId);
    expect(all).toHaveLength(TIMERS);
    expect(new Set(all)).toEqual(new Set(tasks.map((task) => timerTaskMsgId(task.runId, task.waitId))));
    expect(byReplica.filter((fired) => fired.length > 0).length).toBeGreaterThan(1);

    const [rows] = await setup.db
      .select({ n: sql<number>`count(*)::int` })
      .from(outbox)
      .where(sql`${outbox.msgId} like 'timer:run-store-%'`);
    expect(rows?.n).toBe(TIMERS);
    const [unfired] = await setup.db
      .select({ n: sql<number>`count(*)::int` })
      .from(timers)
      .where(sql`${timers.firedAt} is null`);
    expect(unfired?.n).toBe(1);
    expect(await store.pendingCount()).toBe(1);
    const next = await store.msUntilNext();
    expect(next).toBeGreaterThan(3_500_000);
    expect(next).toBeLessThanOrEqual(3_600_000);
  });
});
