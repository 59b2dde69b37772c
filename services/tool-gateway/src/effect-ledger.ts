import { and, eq, lt, sql } from 'drizzle-orm';
import type { JsonValue, NewEvent, ToolTask } from '@dura/contracts';
import { runSubject } from '@dura/contracts';
import { rowsOf, type Db } from '@dura/db';
import { effects, outbox, type EffectRow } from './db/schema';
import { createGroupCommit } from './group-commit';
import { insertClaims, type ClaimInsert } from './claim-inserts';

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
  /**
   * A finish without a claim (`Unclaimed`) found a row of its key already there: it recorded nothing, and
   * the ledger's row is what stands.
   */
  conflict?: boolean;
  /**
   * The attempt finished no longer held its key: another replica took the call over meanwhile (this process
   * stood still past its lease, say). Nothing was recorded or queued; the ledger's row is the taker's.
   */
  fenced?: boolean;
}

/** A call run without a claim (a `read_only` tool's): its row is inserted with its outcome, as attempt 1. */
export interface Unclaimed {
  task: ToolTask;
  startedAt: Date;
}

type Outcome =
  | { status: 'succeeded'; result: JsonValue }
  | { status: 'failed' | 'retry'; error: { code: string; message: string } };

interface FinishItem {
  key: string;
  /** The attempt that holds the key's claim; unset for an unclaimed call. */
  attempt?: number;
  outcome: Outcome;
  observation: NewEvent;
  durationMs: number;
  unclaimed?: Unclaimed;
}

/** The most finishes one statement records. */
const FINISH_BATCH = 64;

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
export function createEffectLedger(
  db: Db,
  clock: () => Date,
  options: {
    fastPathLeaseMs?: number;
    /**
     * Outbox rows this process has published and not yet marked sent. They are in the log already, so they
     * are not ahead of a new row of their run: without this, a call finished right after its run's previous
     * observation went out would wait for that row's mark and go the relay's way.
     */
    inLog?: () => readonly number[];
    /**
     * Marks of published rows that a result's commit writes with its own (`Relay.takeMarks`), saving their
     * own statement; `written` reports whether that commit went through.
     */
    marks?: { take(): readonly number[]; written(ids: readonly number[], ok: boolean): void };
  } = {},
) {
  const fastPathLeaseMs = options.fastPathLeaseMs ?? FAST_PATH_LEASE_MS;
  /**
   * With `durable: false` (idempotent tools without a status check) a new key's claim is committed without waiting for the WAL
   * flush: other replicas see it at once, so two never run the key side by side, but only the result's
   * commit is waited for. Losing the claim in a database crash costs at most a second run of a tool whose
   * repeat is harmless, and once the result's commit is flushed the claim before it is flushed too.
   */
  async function claim(task: ToolTask, leaseMs: number, options: { durable?: boolean } = {}): Promise<Claim> {
    const now = clock();
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const inserted = await (options.durable === false ? claimUnflushed : claimDurable)({
      task,
      startedAt: now,
      leaseUntil,
    });
    if (inserted !== undefined) return { kind: 'claimed', attempt: inserted };

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

  // New keys' claims that arrive while one is written go out together (see `createGroupCommit`).
  const claimDurable = createGroupCommit(
    (items: readonly ClaimInsert[]) => insertClaims(db, items, true),
    64,
  );
  const claimUnflushed = createGroupCommit(
    (items: readonly ClaimInsert[]) => insertClaims(db, items, false),
    64,
  );

  /**
   * Resolves once the key's row is no longer an attempt under a live lease: finished, given back for a
   * retry, or its lease ran out (by this clock), so that a claim made then gets a verdict other than `busy`
   * unless another attempt began meanwhile. Looks every 50 ms at first, then up to every second.
   */
  async function untilSettled(key: string): Promise<void> {
    for (let pauseMs = 50; ; pauseMs = Math.min(1_000, pauseMs * 2)) {
      const [row] = await db
        .select({ status: effects.status, leaseUntil: effects.leaseUntil })
        .from(effects)
        .where(eq(effects.idempotencyKey, key));
      if (!row || row.status !== 'started') return;
      const left = row.leaseUntil.getTime() - clock().getTime();
      if (left <= 0) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pauseMs, left + 1)).unref());
    }
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
   * Finishes that arrive while one is being written go out together (see `createGroupCommit`).
   * With `unclaimed`, the call ran without a claim: its row is inserted here, unless the key has one already,
   * in which case nothing is recorded or queued and the result says `conflict`. Otherwise `holder` is the
   * attempt (a number, or an `Unclaimed` call) this process claimed the key for: the outcome is recorded
   * only while the row is still that attempt's `started` row, else nothing is and the result says `fenced`.
   */
  const finish = (
    key: string,
    outcome: Outcome,
    observation: NewEvent,
    durationMs: number,
    holder: number | Unclaimed,
  ): Promise<Finished> =>
    groupFinish({
      key,
      outcome,
      observation,
      durationMs,
      ...(typeof holder === 'number' ? { attempt: holder } : { unclaimed: holder }),
    });

  const groupFinish = createGroupCommit(finishMany, FINISH_BATCH);

  async function finishMany(items: readonly FinishItem[]): Promise<Finished[]> {
    const inLog = options.inLog?.() ?? [];
    const marks = options.marks?.take() ?? [];
    try {
      const finished = await finishStatement(items, inLog, marks);
      options.marks?.written(marks, true);
      return finished;
    } catch (err) {
      options.marks?.written(marks, false);
      throw err;
    }
  }

  async function finishStatement(
    items: readonly FinishItem[],
    inLog: readonly number[],
    marks: readonly number[],
  ): Promise<Finished[]> {
    // Rows are inserted in run order so that statements locking several runs' insert locks (the outbox
    // order trigger) take them in one order and never deadlock; within a run, in the order they came.
    const rows = items
      .map((item, ord) => {
        const runId = item.observation.meta.runId;
        const succeeded = item.outcome.status === 'succeeded';
        const unclaimed = item.unclaimed;
        return {
          ord,
          key: item.key,
          attempt: item.attempt ?? null,
          unclaimed: unclaimed !== undefined,
          call_id: unclaimed?.task.callId ?? null,
          step: unclaimed?.task.step ?? null,
          tool: unclaimed?.task.tool ?? null,
          args: unclaimed ? JSON.stringify(unclaimed.task.args) : null,
          started_at: unclaimed?.startedAt.toISOString() ?? null,
          status: item.outcome.status,
          result: succeeded ? JSON.stringify((item.outcome as { result: JsonValue }).result) : null,
          error: succeeded ? null : JSON.stringify((item.outcome as { error: unknown }).error),
          duration_ms: Math.round(item.durationMs),
          run_id: runId,
          msg_id: item.observation.meta.id,
          subject: runSubject(runId),
          payload: JSON.stringify(item.observation),
        };
      })
      .sort((a, b) => (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : a.ord - b.ord));
    // A data-modifying CTE runs whether or not it is referenced. Every part of one statement sees the same
    // snapshot, so `ahead` sees only rows committed before this one, never the rows it inserts; a row
    // behind another of its run in the same batch counts as having one ahead.
    // A claimed key's row is updated; an unclaimed one's is inserted, unless the key has a row (`conflict`),
    // and only a row that went in queues its observation.
    const finishedAt = clock().toISOString();
    const result = rowsOf<{
      ord: number;
      id: string | number | null;
      ahead: boolean;
      conflict: boolean;
      fenced: boolean;
    }>(
      await db.execute(sql`
        with input as materialized (
          select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(
            ord int, key text, attempt int, unclaimed boolean, call_id text, step int, tool text, args text,
            started_at timestamptz, status text, result text, error text, duration_ms int, run_id text,
            msg_id text, subject text, payload text)
        ), recorded as (
          update ${effects}
          set status = input.status, result = input.result::jsonb, error = input.error::jsonb,
              finished_at = ${finishedAt}::timestamptz, duration_ms = input.duration_ms
          from input where ${effects.idempotencyKey} = input.key and not input.unclaimed
            and ${effects.attempts} = input.attempt and ${effects.status} = 'started'
          returning ${effects.idempotencyKey} as key
        ), inserted as (
          insert into ${effects} (idempotency_key, run_id, call_id, step, tool, args, status, attempts, result,
                                  error, lease_until, started_at, finished_at, duration_ms)
          select key, run_id, call_id, step, tool, args::jsonb, status, 1, result::jsonb, error::jsonb,
                 started_at, started_at, ${finishedAt}::timestamptz, duration_ms
          from input where unclaimed
          order by key
          on conflict do nothing
          returning idempotency_key as key
        ), marked as (
          update ${outbox} set sent_at = now()
          where id in (select id from ${outbox} where id = any(${`{${marks.join(',')}}`}::bigint[])
                       and sent_at is null for update skip locked)
        ), ahead as materialized (
          select input.ord,
                 exists (select 1 from ${outbox} where run_id = input.run_id and sent_at is null
                         and not (id = any(${`{${inLog.join(',')}}`}::bigint[])))
                 or row_number() over (partition by input.run_id order by input.ord) > 1 as ahead
          from input
        ), queued as (
          insert into ${outbox} (run_id, msg_id, subject, payload, claimed_until)
          select input.run_id, input.msg_id, input.subject, input.payload::jsonb,
                 case when ahead.ahead then null
                      else now() + make_interval(secs => ${fastPathLeaseMs / 1000}::float8) end
          from input join ahead on ahead.ord = input.ord
          where input.key in (select key from recorded) or input.key in (select key from inserted)
          order by input.run_id, input.ord
          on conflict (msg_id) do nothing
          returning id, msg_id
        )
        select ahead.ord, queued.id, ahead.ahead,
               input.unclaimed and input.key not in (select key from inserted) as conflict,
               not input.unclaimed and input.key not in (select key from recorded) as fenced
        from ahead join input on input.ord = ahead.ord left join queued on queued.msg_id = input.msg_id`),
    );
    const byOrd = new Map(result.map((row) => [Number(row.ord), row]));
    return items.map((item, ord) => {
      const row = byOrd.get(ord);
      if (row?.conflict) return { queued: undefined, ahead: true, conflict: true };
      if (row?.fenced) return { queued: undefined, ahead: true, fenced: true };
      if (row?.id === null || row?.id === undefined) return { queued: undefined, ahead: true };
      const runId = item.observation.meta.runId;
      return {
        queued: {
          id: Number(row.id),
          runId,
          msgId: item.observation.meta.id,
          subject: runSubject(runId),
          payload: item.observation,
        },
        ahead: row.ahead,
      };
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
    untilSettled,
    reclaim,
    finish,
    enqueue: (observation: NewEvent, republish: boolean) => enqueue(db, observation, republish),
  };
}

export type EffectLedger = ReturnType<typeof createEffectLedger>;
