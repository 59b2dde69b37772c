import { and, eq, lt, sql } from 'drizzle-orm';
import type { JsonValue, NewEvent, ToolTask } from '@dura/contracts';
import { runSubject } from '@dura/contracts';
import { rowsOf, type Db } from '@dura/db';
import { effects, outbox, type EffectRow } from './db/schema';

/** An outbox row as the relay publishes it. */
export interface QueuedObservation {
  id: number;
  runId: string;
  msgId: string;
  subject: string;
  payload: NewEvent;
}

/** What `finish` queued (undefined when the observation was queued before), and whether rows are ahead of it. */
export interface Finished {
  queued: QueuedObservation | undefined;
  ahead: boolean;
}

export type Claim =
  | { kind: 'claimed'; attempt: number }
  | { kind: 'busy'; row: EffectRow }
  | { kind: 'finished'; row: EffectRow }
  | { kind: 'orphaned'; row: EffectRow };

/**
 * How long a row's writer keeps the right to publish it itself (`finish` claims it, `Relay.sendNow`
 * publishes it). Relays leave a claimed row, and the rows of its run behind it, alone until the claim runs
 * out, so an observation goes out once; a writer that died mid-publish leaves its row to the relay after this.
 */
export const FAST_PATH_LEASE_MS = 5_000;

/**
 * The effect ledger (DESIGN invariant 5). A key is claimed atomically: a new key by insert, a `retry` row or
 * an orphaned `started` row (lease expired) by a conditional update, so two replicas never both run it.
 */
export function createEffectLedger(db: Db, clock: () => Date, options: { fastPathLeaseMs?: number } = {}) {
  const fastPathLeaseMs = options.fastPathLeaseMs ?? FAST_PATH_LEASE_MS;
  /**
   * With `durable: false` (idempotent tools) a new key's claim is committed without waiting for the WAL
   * flush: other replicas see it at once, so two never run the key side by side, but only the result's
   * commit is waited for. Losing the claim in a database crash costs at most a second run of a tool whose
   * repeat is harmless, and once the result's commit is flushed the claim before it is flushed too.
   */
  async function claim(task: ToolTask, leaseMs: number, options: { durable?: boolean } = {}): Promise<Claim> {
    const now = clock();
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const inserted =
      options.durable === false
        ? await claimUnflushed(task, now, leaseUntil)
        : await db
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
    if (!row) return claim(task, leaseMs, options);
    if (row.status === 'succeeded' || row.status === 'failed') return { kind: 'finished', row };
    if (row.status === 'started' && row.leaseUntil.getTime() <= now.getTime())
      return { kind: 'orphaned', row };
    return { kind: 'busy', row };
  }

  /** The insert of a new `started` row as one statement whose implicit transaction commits asynchronously. */
  async function claimUnflushed(
    task: ToolTask,
    now: Date,
    leaseUntil: Date,
  ): Promise<{ attempts: number }[]> {
    // `set_config(..., true)` lasts until the statement's own transaction ends, so its commit does not wait.
    return rowsOf<{ attempts: number }>(
      await db.execute(sql`
        insert into ${effects} (idempotency_key, run_id, call_id, step, tool, args, status, attempts,
                                lease_until, started_at)
        select ${task.idempotencyKey}, ${task.runId}, ${task.callId}, ${task.step}, ${task.tool},
               ${JSON.stringify(task.args)}::jsonb, 'started', 1, ${leaseUntil.toISOString()}::timestamptz,
               ${now.toISOString()}::timestamptz
        where set_config('synchronous_commit', 'off', true) is not null
        on conflict do nothing
        returning attempts`),
    );
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

  /**
   * Records the outcome and queues its observation in ONE statement (so neither exists without the
   * other, in one round trip and one commit). Returns the queued outbox row, and whether the run already
   * had unsent rows: only a row with none ahead of it may be published at once without the relay, since
   * the relay keeps each run's rows in order. Such a row is queued claimed for `fastPathLeaseMs`: the caller
   * must publish it with `Relay.sendNow`, and relays leave it to the caller until the claim runs out.
   */
  async function finish(
    key: string,
    outcome:
      | { status: 'succeeded'; result: JsonValue }
      | { status: 'failed' | 'retry'; error: { code: string; message: string } },
    observation: NewEvent,
    durationMs: number,
  ): Promise<Finished> {
    const runId = observation.meta.runId;
    const subject = runSubject(runId);
    const result = outcome.status === 'succeeded' ? JSON.stringify(outcome.result) : null;
    const error = outcome.status === 'succeeded' ? null : JSON.stringify(outcome.error);
    // A data-modifying CTE runs whether or not it is referenced. Every part of one statement sees the same
    // snapshot, so `ahead` sees only rows committed before this one, never the row it inserts.
    const rows = rowsOf<{ id: string | number | null; ahead: boolean }>(
      await db.execute(sql`
        with recorded as (
          update ${effects}
          set status = ${outcome.status}, result = ${result}::jsonb, error = ${error}::jsonb,
              finished_at = ${clock().toISOString()}::timestamptz, duration_ms = ${Math.round(durationMs)}
          where idempotency_key = ${key}
        ), ahead as (
          select exists (select 1 from ${outbox} where run_id = ${runId} and sent_at is null) as ahead
        ), queued as (
          insert into ${outbox} (run_id, msg_id, subject, payload, claimed_until)
          select ${runId}, ${observation.meta.id}, ${subject}, ${JSON.stringify(observation)}::jsonb,
                 case when ahead.ahead then null
                      else now() + make_interval(secs => ${fastPathLeaseMs / 1000}::float8) end
          from ahead
          on conflict (msg_id) do nothing
          returning id
        )
        select (select id from queued) as id, (select ahead from ahead) as ahead`),
    );
    const row = rows[0];
    if (row?.id === null || row?.id === undefined) return { queued: undefined, ahead: true };
    return {
      queued: { id: Number(row.id), runId, msgId: observation.meta.id, subject, payload: observation },
      ahead: row.ahead,
    };
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
