import { sql } from 'drizzle-orm';
import { newEvent, runSubject, timerTaskMsgId, type NewEvent, type TimerTask } from '@dura/contracts';
import { rowsOf, type Db } from '@dura/db';
import { outbox, timers, type TimerRow } from './db/schema';

/** A timer that just fired: its observation is queued in the outbox. */
export interface FiredTimer {
  runId: string;
  waitId: string;
  dueAt: Date;
  msgId: string;
}

/** The observation a fired timer records; its id (and msg-id) is the timer task's, so every path agrees. */
export function timerFiredEvent(timer: TimerRow, now: Date): NewEvent {
  return newEvent(
    'timer_fired',
    { waitId: timer.waitId },
    {
      id: timerTaskMsgId(timer.runId, timer.waitId),
      runId: timer.runId,
      ts: now.toISOString(),
      causationId: timer.causationId,
      correlationId: timer.correlationId,
      ...(timer.trace ? { trace: timer.trace } : {}),
    },
  );
}

/**
 * The `timers` table. Due times are compared with the database's clock, the one clock every replica shares,
 * so replicas with skewed clocks neither fire early nor spin waiting for a time that has already come.
 */
export function createTimerStore(db: Db, clock: () => Date) {
  /**
   * Stores a timer; a repeat of the same (run, wait) is a no-op. True when this call stored it. A wake
   * (`task.wake`) makes an unfired timer due now instead (stored due now when its task has not come yet): it
   * fires once, never again after it fired; true when it changed or stored the timer.
   */
  async function schedule(task: TimerTask): Promise<boolean> {
    const row = {
      runId: task.runId,
      waitId: task.waitId,
      dueAt: task.wake ? sql`now()` : new Date(task.dueAt),
      causationId: task.causationId,
      correlationId: task.correlationId,
      trace: task.trace ?? null,
    };
    const insert = db.insert(timers).values(row);
    const stored = await (
      task.wake
        ? insert.onConflictDoUpdate({
            target: [timers.runId, timers.waitId],
            set: { dueAt: sql`least(${timers.dueAt}, now())` },
            setWhere: sql`${timers.firedAt} is null and ${timers.dueAt} > now()`,
          })
        : insert.onConflictDoNothing()
    ).returning({ runId: timers.runId });
    return stored.length > 0;
  }

  /**
   * Fires up to `limit` due timers: in one transaction, marks them fired and queues their `timer_fired`
   * observations. SKIP LOCKED lets replicas fire side by side without ever taking the same timer.
   */
  async function fireDue(limit: number): Promise<FiredTimer[]> {
    return db.transaction(async (tx) => {
      const due = await tx
        .select()
        .from(timers)
        .where(sql`${timers.firedAt} is null and ${timers.dueAt} <= now()`)
        .orderBy(timers.dueAt)
        .limit(limit)
        .for('update', { skipLocked: true });
      if (due.length === 0) return [];
      const now = clock();
      // Each outbox row takes its run's insert lock (migration 0001) until commit; taking them in one global
      // order keeps two replicas firing timers of the same runs from deadlocking.
      const events = due
        .map((timer) => timerFiredEvent(timer, now))
        .sort((a, b) => (a.meta.runId < b.meta.runId ? -1 : a.meta.runId > b.meta.runId ? 1 : 0));
      await tx
        .insert(outbox)
        .values(
          events.map((event) => ({
            runId: event.meta.runId,
            msgId: event.meta.id,
            subject: runSubject(event.meta.runId),
            payload: event,
          })),
        )
        .onConflictDoNothing({ target: outbox.msgId });
      await tx.execute(sql`
        update ${timers} set fired_at = now()
        where (run_id, wait_id) in (${sql.join(
          due.map((timer) => sql`(${timer.runId}, ${timer.waitId})`),
          sql`, `,
        )})`);
      return due.map((timer) => ({
        runId: timer.runId,
        waitId: timer.waitId,
        dueAt: timer.dueAt,
        msgId: timerTaskMsgId(timer.runId, timer.waitId),
      }));
    });
  }

  /** Milliseconds until the earliest unfired timer is due (0 when one is due now); undefined when none waits. */
  async function msUntilNext(): Promise<number | undefined> {
    const [row] = rowsOf<{ ms: number | string | null }>(
      await db.execute(sql`
        select extract(epoch from min(due_at) - now()) * 1000 as ms
        from ${timers} where fired_at is null`),
    );
    if (row?.ms === null || row?.ms === undefined) return undefined;
    return Math.max(0, Math.ceil(Number(row.ms)));
  }

  async function pendingCount(): Promise<number> {
    const [row] = rowsOf<{ n: number }>(
      await db.execute(sql`select count(*)::int as n from ${timers} where fired_at is null`),
    );
    return row?.n ?? 0;
  }

  return { schedule, fireDue, msUntilNext, pendingCount };
}

export type TimerStore = ReturnType<typeof createTimerStore>;
