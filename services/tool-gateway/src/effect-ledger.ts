import { and, eq, lt, sql } from 'drizzle-orm';
import type { JsonValue, NewEvent, ToolTask } from '@dura/contracts';
import { runSubject } from '@dura/contracts';
import type { Db } from '@dura/db';
import { effects, outbox, type EffectRow } from './db/schema';

export type Claim =
  | { kind: 'claimed'; attempt: number }
  | { kind: 'busy'; row: EffectRow }
  | { kind: 'finished'; row: EffectRow }
  | { kind: 'orphaned'; row: EffectRow };

/**
 * The effect ledger (DESIGN invariant 5). A key is claimed atomically: a new key by insert, a `retry` row or
 * an orphaned `started` row (lease expired) by a conditional update, so two replicas never both run it.
 */
export function createEffectLedger(db: Db, clock: () => Date) {
  async function claim(task: ToolTask, leaseMs: number): Promise<Claim> {
    const now = clock();
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const inserted = await db
      .insert(effects)
      .values({
        idempotencyKey: task.idempotencyKey,
        runId: task.runId,
        callId: task.callId,
        step: task.step,
        tool: task.tool,
        args: task.args,
        status: 'started',
        attempts: 1,
        leaseUntil,
        startedAt: now,
      })
      .onConflictDoNothing()
      .returning({ attempts: effects.attempts });
    if (inserted[0]) return { kind: 'claimed', attempt: inserted[0].attempts };

    const retried = await db
      .update(effects)
      .set({ status: 'started', attempts: sql`${effects.attempts} + 1`, leaseUntil })
      .where(and(eq(effects.idempotencyKey, task.idempotencyKey), eq(effects.status, 'retry')))
      .returning({ attempts: effects.attempts });
    if (retried[0]) return { kind: 'claimed', attempt: retried[0].attempts };

    const [row] = await db.select().from(effects).where(eq(effects.idempotencyKey, task.idempotencyKey));
    if (!row) return claim(task, leaseMs);
    if (row.status === 'succeeded' || row.status === 'failed') return { kind: 'finished', row };
    if (row.status === 'started' && row.leaseUntil.getTime() <= now.getTime())
      return { kind: 'orphaned', row };
    return { kind: 'busy', row };
  }

  /** Takes over an orphaned attempt for a re-run; false when another replica took it first. */
  async function reclaim(key: string, leaseMs: number): Promise<number | undefined> {
    const now = clock();
    const [row] = await db
      .update(effects)
      .set({ attempts: sql`${effects.attempts} + 1`, leaseUntil: new Date(now.getTime() + leaseMs) })
      .where(and(eq(effects.idempotencyKey, key), eq(effects.status, 'started'), lt(effects.leaseUntil, now)))
      .returning({ attempts: effects.attempts });
    return row?.attempts;
  }

  /** Records the outcome and its observation in ONE transaction (the outbox), so neither exists without the other. */
  async function finish(
    key: string,
    outcome:
      | { status: 'succeeded'; result: JsonValue }
      | { status: 'failed' | 'retry'; error: { code: string; message: string } },
    observation: NewEvent,
    durationMs: number,
  ): Promise<void> {
    await db.transaction(async (tx) => {
      await tx
        .update(effects)
        .set({
          status: outcome.status,
          result: outcome.status === 'succeeded' ? outcome.result : null,
          error: outcome.status === 'succeeded' ? null : outcome.error,
          finishedAt: clock(),
          durationMs: Math.round(durationMs),
        })
        .where(eq(effects.idempotencyKey, key));
      await enqueue(tx, observation, false);
    });
  }

  /**
   * Queues an observation for the relay. With `republish`, an observation already sent is sent again: the
   * log drops it as a duplicate if it has it, and restores it if a broker failover lost it.
   */
  async function enqueue(target: Db, observation: NewEvent, republish: boolean): Promise<void> {
    const insert = target.insert(outbox).values({
      runId: observation.meta.runId,
      msgId: observation.meta.id,
      subject: runSubject(observation.meta.runId),
      payload: observation,
    });
    await (republish
      ? insert.onConflictDoUpdate({ target: outbox.msgId, set: { sentAt: null } })
      : insert.onConflictDoNothing());
  }

  return {
    claim,
    reclaim,
    finish,
    enqueue: (observation: NewEvent, republish: boolean) => enqueue(db, observation, republish),
  };
}

export type EffectLedger = ReturnType<typeof createEffectLedger>;
