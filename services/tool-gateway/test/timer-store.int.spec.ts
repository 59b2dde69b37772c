import { beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'drizzle-orm';
import { timerTaskMsgId } from '@dura/contracts';
import { useTestInfra } from '@dura/testing';
import { createTimerStore, type FiredTimer } from '../src/timer-store';
import { outbox, timers } from '../src/index';
import { timerTask, type Connections } from './support';
import { useConnections } from './gateway-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const TIMERS = 200;
const infra = useTestInfra();
const env = useConnections(infra);
const firers: Connections[] = [];

beforeAll(async () => {
  for (let i = 0; i < 3; i++) firers.push(await env.open(`firer-${i}`));
});

describe('the timer store', () => {
  it('never fires a timer twice when three replicas fire due timers at the same moment', async () => {
    const store = createTimerStore(env.setup.db, () => new Date());
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

    const [rows] = await env.setup.db
      .select({ n: sql<number>`count(*)::int` })
      .from(outbox)
      .where(sql`${outbox.msgId} like 'timer:run-store-%'`);
    expect(rows?.n).toBe(TIMERS);
    const [unfired] = await env.setup.db
      .select({ n: sql<number>`count(*)::int` })
      .from(timers)
      .where(sql`${timers.firedAt} is null`);
    expect(unfired?.n).toBe(1);
    expect(await store.pendingCount()).toBe(1);
    const next = await store.msUntilNext();
    expect(next).toBeGreaterThan(3_500_000);
    expect(next).toBeLessThanOrEqual(3_600_000);
  });

  it('given a wake, an unfired timer comes due now and fires once; a fired one never fires again; a wake before its task stores it due now', async () => {
    const store = createTimerStore(env.setup.db, () => new Date());
    const hour = new Date(Date.now() + 3_600_000);
    const fired = async (runId: string) =>
      (
        await env.setup.db
          .select({ n: sql<number>`count(*)::int` })
          .from(outbox)
          .where(sql`${outbox.runId} = ${runId}`)
      )[0]?.n;
    const fireAll = async () => {
      while ((await store.fireDue(50)).length > 0);
    };

    // Due in an hour, woken: fires at the next pass, once.
    const later = timerTask('run-wake-1', 'capacity:1:7', hour);
    expect(await store.schedule(later)).toBe(true);
    await fireAll();
    expect(await fired('run-wake-1')).toBe(0);
    expect(await store.schedule({ ...later, wake: true })).toBe(true);
    await fireAll();
    expect(await fired('run-wake-1')).toBe(1);
    // Woken again, or its task published again, after it fired: nothing more.
    expect(await store.schedule({ ...later, wake: true })).toBe(false);
    expect(await store.schedule(later)).toBe(false);
    await fireAll();
    expect(await fired('run-wake-1')).toBe(1);

    // The wake arrives before the timer's own task: stored due now; the task then changes nothing.
    const raced = timerTask('run-wake-2', 'capacity:1:9', hour);
    expect(await store.schedule({ ...raced, wake: true })).toBe(true);
    expect(await store.schedule(raced)).toBe(false);
    await fireAll();
    expect(await fired('run-wake-2')).toBe(1);

    // A task that is not a wake never moves a stored timer earlier, whatever due time it says.
    const kept = timerTask('run-wake-3', 'w-1', hour);
    await store.schedule(kept);
    expect(await store.schedule(timerTask('run-wake-3', 'w-1', new Date(Date.now() - 1_000)))).toBe(false);
    await fireAll();
    expect(await fired('run-wake-3')).toBe(0);
  });
});
