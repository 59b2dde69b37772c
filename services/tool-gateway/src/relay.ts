import type { JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/nats-core';
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import { SUBJECTS, TASK_VERSION, type DecideTask, type NewEvent } from '@dura/contracts';
import { listenerFor, rowsOf, type Db, type DbHandle, type Unlisten } from '@dura/db';
import { EVENT_TYPE_HEADER, isJsApiError, JS_CODES } from '@dura/event-store';
import { duraMeter, duraTracer, failpoint, type Logger } from '@dura/service-kit';
import {
  DURA_ATTRS,
  DURA_METRICS,
  contextFromTraceparent,
  declareCounter,
  declareGauge,
  traceparentOf,
  type MetricSpec,
  withProducerSpan,
  withSpan,
} from '@dura/telemetry';
import { outbox } from './db/schema';

const UTF8 = new TextEncoder();

/** The channel the outbox trigger (migration 0001) NOTIFYs on commit of every insert. */
export const OUTBOX_CHANNEL = 'dura_outbox';
const LISTEN_RETRY_MS = 1_000;
const FAILED_PASS_PAUSE_MS = 1_000;
/**
 * How long a published row may wait for its mark: marks made meanwhile share one UPDATE, and most ride on
 * the next result's commit instead (`takeMarks`). Far below `FAST_PATH_LEASE_MS`, so no relay pass takes
 * a published row for one that needs publishing.
 */
const MARK_LINGER_MS = 100;
// A publish buffered while the broker was away may never be answered; give up on it sooner than the
// client's default, so one lost ack does not hold up every run's observations for long.
const PUBLISH_TIMEOUT_MS = 5_000;

export interface RelayOptions {
  db: Db;
  js: JetStreamClient;
  log: Logger;
  /** Safety-net polling interval; commits anywhere wake the relay at once through LISTEN/NOTIFY. */
  pollMs?: number;
  batchSize?: number;
  /** How long a pass waits after a commit notification for the row's writer to publish it itself (default 50). */
  notifyDelayMs?: number;
  /** How to LISTEN; defaults to the handle that opened `db` (see `listenerFor`). */
  listen?: DbHandle['listen'];
}

type OutboxRow = typeof outbox.$inferSelect;

/** An observation published: its sequence, and its stored bytes when it landed right behind `after`. */
export interface SentObservation {
  seq: number;
  followed?: Uint8Array;
}

/** tool-gateway: observations published, by who published them: the row's writer at once, or a relay pass. */
export const OBSERVATIONS_PUBLISHED = {
  name: 'dura_observations_published',
  description:
    'Outbox observations published to the run logs, by path: fast_path (by the writer right after its commit) or relay (by a relay pass)',
  labels: ['path'],
} satisfies MetricSpec<'path'>;

/** How many observations this relay published by each path (the counter's values, for this process). */
export interface PublishCounts {
  fastPath: number;
  relay: number;
}

/** A row is free for a relay pass when its writer's claim is absent or has run out (by the database clock). */
const unclaimed = sql`(${outbox.claimedUntil} is null or ${outbox.claimedUntil} <= now())`;

/**
 * Publishes outbox rows to the run logs with the observation's msg-id, nudges the planner with a decide
 * task, then marks the rows sent. A crash between publish and mark re-publishes, and JetStream drops the
 * duplicate. Several replicas relay side by side without breaking any run's order: a pass takes a
 * transaction-scoped advisory lock per run and relays only the runs it locked, each in outbox-id order.
 * A row its writer claimed (see `FAST_PATH_LEASE_MS`) is the writer's to publish (`sendNow`): passes leave
 * it and the rows of its run behind it until the writer marks it sent, gives it back, or its claim runs out.
 */
export function createRelay(options: RelayOptions) {
  const { db, js, log } = options;
  const pollMs = options.pollMs ?? 250;
  const batchSize = options.batchSize ?? 100;
  const listen = options.listen ?? listenerFor(db);
  const tracer = duraTracer();
  // Read at scrape time: what is queued and how long the oldest row has waited.
  const backlog = async (): Promise<{ rows: number; lagSeconds: number }> => {
    const [row] = rowsOf<{ rows: number; lag: number | null }>(
      await db.execute(sql`
        select count(*)::int as rows, extract(epoch from now() - min(created_at))::float8 as lag
        from ${outbox} where sent_at is null`),
    );
    return { rows: row?.rows ?? 0, lagSeconds: Math.max(0, row?.lag ?? 0) };
  };
  const gauges = [
    declareGauge(duraMeter(), DURA_METRICS.outboxPending, async (observe) => observe((await backlog()).rows)),
    declareGauge(duraMeter(), DURA_METRICS.outboxLag, async (observe) =>
      observe((await backlog()).lagSeconds),
    ),
  ];
  let running = false;
  let woken = false;
  let wakeUp: (() => void) | undefined;
  let loop: Promise<void> | undefined;
  let listening: Promise<Unlisten | undefined> | undefined;
  let notifyTimer: NodeJS.Timeout | undefined;
  /** Published rows whose mark is not written yet, and when the UPDATE that writes them goes out. */
  let pendingMarks: number[] = [];
  let markTimer: NodeJS.Timeout | undefined;
  /** UPDATEs of marks on their way. */
  const marking = new Set<Promise<void>>();
  const notifyDelayMs = options.notifyDelayMs ?? 50;
  const published = declareCounter(duraMeter(), OBSERVATIONS_PUBLISHED);
  const counts: PublishCounts = { fastPath: 0, relay: 0 };
  /** Rows `sendNow` published whose mark is still on its way. */
  const unmarked = new Set<number>();

  /** Takes the runs of the oldest unsent, unclaimed rows that no other relay is relaying right now. */
  async function lockRuns(tx: Db): Promise<string[]> {
    const result = await tx.execute(sql`
      with candidates as materialized (
        select run_id, min(id) as first_id
        from (select id, run_id from ${outbox} where sent_at is null and ${unclaimed}
              order by id limit ${batchSize}) oldest
        group by run_id
      )
      select run_id from candidates
      where pg_try_advisory_xact_lock(hashtext('dura_outbox_relay'), hashtext(run_id))
      order by first_id`);
    return rowsOf<{ run_id: string }>(result).map((row) => row.run_id);
  }

  /** Publishes one run's rows in order, stopping at the first failure so nothing overtakes it. */
  async function publishRun(rows: readonly OutboxRow[], sent: number[]): Promise<Error | undefined> {
    for (const row of rows) {
      try {
        await publish(row);
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
      sent.push(row.id);
      counts.relay += 1;
      published.add(1, { path: 'relay' });
    }
    return undefined;
  }

  /**
   * Appends the observation and nudges the planner, in the trace of the tool call that recorded it (its
   * `meta.trace`), so the run's trace goes on through the relay whichever process relays it, and when.
   */
  async function publish(
    row: Pick<OutboxRow, 'runId' | 'msgId' | 'subject' | 'payload'>,
    nudge = true,
    after?: number,
  ): Promise<SentObservation> {
    const event = row.payload as NewEvent;
    return withSpan(
      tracer,
      'dura.outbox.relay',
      {
        parent: contextFromTraceparent(event.meta.trace),
        attributes: { [DURA_ATTRS.runId]: row.runId, [DURA_ATTRS.eventType]: event.type },
      },
      async () => {
        let followed: Uint8Array | undefined;
        const ack = await withProducerSpan(
          tracer,
          { destination: row.subject, destinationTemplate: 'dura.run.{runId}', messageId: row.msgId },
          async (headers) => {
            headers.set(EVENT_TYPE_HEADER, event.type);
            // Encoded once: the bytes published are the bytes a guarded caller folds (`followed`).
            const data = UTF8.encode(JSON.stringify(event));
            const options = { msgID: row.msgId, headers, timeout: PUBLISH_TIMEOUT_MS };
            if (after === undefined) return js.publish(row.subject, data, options);
            // Guarded by the event it follows: when the log took it there, the caller knows the run's tail.
            // The client writes the expectation into the headers it is given, so the guarded try gets a copy.
            try {
              const guarded = await js.publish(row.subject, data, {
                ...options,
                headers: copyHeaders(headers),
                expect: { lastSubjectSequence: after },
              });
              if (!guarded.duplicate) followed = data;
              return guarded;
            } catch (err) {
              if (!isJsApiError(err, JS_CODES.wrongLastSequence)) throw err;
              return js.publish(row.subject, data, options);
            }
          },
        );
        // A call run inside the planner's drive (`sendNow` without a nudge) is followed up by that drive.
        if (!nudge) return { seq: ack.seq, ...(followed ? { followed } : {}) };
        const msgID = `${row.runId}@${ack.seq}`;
        await withProducerSpan(
          tracer,
          { destination: SUBJECTS.decideTask, messageId: msgID },
          (headers, span) => {
            const trace = traceparentOf(span);
            const task: DecideTask = {
              v: TASK_VERSION,
              runId: row.runId,
              afterSeq: ack.seq,
              reason: event.type === 'timer_fired' ? 'timer' : 'observation',
              ...(trace ? { trace } : {}),
            };
            return js.publish(SUBJECTS.decideTask, JSON.stringify(task), {
              msgID,
              headers,
              timeout: PUBLISH_TIMEOUT_MS,
            });
          },
        );
        return { seq: ack.seq };
      },
    );
  }

  /** One pass: relays up to `batchSize` rows; throws (after recording what was sent) when a publish failed. */
  async function relayOnce(): Promise<number> {
    const { sent, failure } = await db.transaction(async (tx) => {
      const runs = await lockRuns(tx);
      if (runs.length === 0) return { sent: [], failure: undefined };
      // Re-read under the locks: a relay that held one a moment ago may have sent these rows since. A row
      // its writer still claims is left to the writer, and so is every later row of its run, to keep order;
      // they are not locked either, so the writer's mark is not held up by this pass.
      const rows = await tx
        .select()
        .from(outbox)
        .where(
          and(
            isNull(outbox.sentAt),
            inArray(outbox.runId, runs),
            sql`not exists (
              select 1 from ${outbox} as claimed
              where claimed.run_id = ${outbox.runId} and claimed.sent_at is null
                and claimed.id <= ${outbox.id} and claimed.claimed_until > now())`,
          ),
        )
        .orderBy(asc(outbox.id))
        .limit(batchSize)
        .for('update');
      const byRun = new Map<string, OutboxRow[]>();
      for (const row of rows) byRun.set(row.runId, [...(byRun.get(row.runId) ?? []), row]);
      const sent: number[] = [];
      // Runs are independent, so they go out concurrently; within a run, one after the other.
      const failures = await Promise.all([...byRun.values()].map((runRows) => publishRun(runRows, sent)));
      if (sent.length > 0) {
        failpoint('relay.after-publish');
        await tx.update(outbox).set({ sentAt: new Date() }).where(inArray(outbox.id, sent));
      }
      return { sent, failure: failures.find((err) => err !== undefined) };
    });
    if (failure !== undefined) throw failure;
    return sent.length;
  }

  /**
   * Publishes a row its writer just committed and claimed (`finish` claims a row with no unsent row of its
   * run ahead of it), without waiting for a relay pass: the fast path of every tool call. Relay passes leave
   * the claimed row and the rest of its run alone, so the row goes out once and the run's order holds. On
   * failure the claim is given back and the relay takes over; if this process dies first, the relay takes
   * over when the claim runs out. Resolves with the observation's sequence in its run's log, or undefined
   * when the relay took over. `nudge: false` publishes no decide task: the caller drives the run itself
   * (a call run inside the planner's drive); a row the relay takes over is nudged as always. `after`: the
   * run's last sequence as the caller knows it; when the observation lands right behind it, `followed` holds
   * the bytes stored, so the caller can fold them without reading the log.
   */
  async function sendNow(
    row: Pick<OutboxRow, 'id' | 'runId' | 'msgId' | 'subject' | 'payload'>,
    options: { nudge?: boolean; after?: number } = {},
  ): Promise<SentObservation | undefined> {
    let sent: SentObservation;
    try {
      sent = await publish(row, options.nudge ?? true, options.after);
    } catch (err) {
      log.warn('publishing an observation failed; the relay will retry', { runId: row.runId, err });
      await release(row.id);
      wake();
      return undefined;
    }
    counts.fastPath += 1;
    published.add(1, { path: 'fast_path' });
    unmarked.add(row.id);
    // The same crash point as a pass's: published, not yet marked sent.
    failpoint('relay.after-publish');
    // Not awaited: the caller's work is done once the observation is out. A row published but not yet
    // marked is published again by a pass once its claim runs out, and the log drops the duplicate.
    pendingMarks.push(row.id);
    markTimer ??= setTimeout(() => void flushMarks(), MARK_LINGER_MS);
    return sent;
  }

  /**
   * Hands the marks not written yet to a statement of the caller's (a result's commit), which marks them
   * sent with its own; `marksWritten` says how that went. Until then they stay published-unmarked.
   */
  function takeMarks(): number[] {
    const ids = pendingMarks;
    pendingMarks = [];
    clearTimeout(markTimer);
    markTimer = undefined;
    return ids;
  }

  /** The caller's statement marked `ids` sent (`ok`), or failed and gives them back to be marked here. */
  function marksWritten(ids: readonly number[], ok: boolean): void {
    if (ok) {
      for (const id of ids) unmarked.delete(id);
      return;
    }
    pendingMarks.push(...ids);
    if (pendingMarks.length > 0) markTimer ??= setTimeout(() => void flushMarks(), MARK_LINGER_MS);
  }

  /** Writes the marks not written yet now; settles when every mark on its way is written (or failed). */
  async function flushMarks(): Promise<void> {
    const ids = takeMarks();
    if (ids.length > 0) {
      const written = markSent(ids)
        .catch((err: unknown) => {
          log.warn('marking published observations sent failed; a later pass re-sends them', { err });
        })
        .finally(() => {
          for (const id of ids) unmarked.delete(id);
          marking.delete(written);
        });
      marking.add(written);
    }
    await Promise.all(marking);
  }

  /** Gives a claimed row back to the relay at once; if that fails too, its claim runs out on its own. */
  async function release(id: number): Promise<void> {
    try {
      await db
        .update(outbox)
        .set({ claimedUntil: null })
        .where(and(eq(outbox.id, id), isNull(outbox.sentAt)));
    } catch (err) {
      log.warn(
        'giving a claimed observation back to the relay failed; it is relayed when its claim runs out',
        {
          err,
        },
      );
    }
  }

  /**
   * Marks rows sent in one UPDATE. Rows a pass holds are skipped, not waited for (a pass takes a claimed row
   * only once its claim ran out): that pass publishes and marks them itself, and if its process dies they
   * stay unsent and the next pass publishes them again (the log drops the duplicate). When rows of the same
   * runs wait behind the marked ones (queued while these were claimed), this relay passes at once instead
   * of at its next poll.
   */
  async function markSent(ids: readonly number[]): Promise<void> {
    const list = `{${ids.join(',')}}`;
    // The outer select sees the snapshot before the update, so it leaves the marked ids out itself. The
    // mark commits without waiting for the WAL flush: a mark lost in a database crash only means the row
    // is published again, and the log drops the duplicate by its msg-id.
    const [result] = rowsOf<{ behind: boolean }>(
      await db.execute(sql`
        with marked as (
          update ${outbox} set sent_at = ${new Date().toISOString()}::timestamptz
          where id in (select id from ${outbox} where id = any(${list}::bigint[]) and sent_at is null
                       for update skip locked)
            and set_config('synchronous_commit', 'off', true) is not null
          returning run_id
        )
        select exists (
          select 1 from ${outbox}
          where sent_at is null and not (id = any(${list}::bigint[])) and run_id in (select run_id from marked)
        ) as behind`),
    );
    if (result?.behind) wake();
  }

  /**
   * A commit elsewhere: its writer normally publishes the row itself right away (`sendNow`), so the pass
   * waits a moment instead of racing it, and takes whatever is still unsent then, in one batch.
   */
  function notified(): void {
    if (notifyTimer || !running) return;
    notifyTimer = setTimeout(() => {
      notifyTimer = undefined;
      wake();
    }, notifyDelayMs);
  }

  /** LISTENs until it succeeds once (the listener itself re-listens after connection loss) or the relay stops. */
  async function subscribe(): Promise<Unlisten | undefined> {
    if (!listen) return undefined;
    while (running) {
      try {
        return await listen(OUTBOX_CHANNEL, notified, wake);
      } catch (err) {
        log.warn('cannot LISTEN for outbox commits yet; polling meanwhile', { err });
        await sleep(LISTEN_RETRY_MS);
      }
    }
    return undefined;
  }

  function wake(): void {
    woken = true;
    wakeUp?.();
  }

  /** Sleeps up to `ms`, or until a notification or `wake()`. */
  async function nap(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wakeUp = undefined;
  }

  async function run(): Promise<void> {
    while (running) {
      woken = false;
      let sent = 0;
      try {
        sent = await relayOnce();
      } catch (err) {
        log.warn('relay pass failed; retrying', { err });
        if (running && !woken) await nap(FAILED_PASS_PAUSE_MS);
        continue;
      }
      if (sent < batchSize && !woken && running) await nap(pollMs);
    }
  }

  return {
    start(): void {
      running = true;
      listening = subscribe();
      loop = run();
    },
    /** Relays at once instead of at the next notification or poll. */
    wake,
    /** Outbox rows this relay published at once and has not marked sent yet: they are in the log. */
    publishedUnmarked: (): number[] => [...unmarked],
    sendNow,
    takeMarks,
    marksWritten,
    /** Writes the marks not written yet now (a row waits behind them for a pass); settles when all are written. */
    flushMarks,
    /** Observations this relay published so far, by path (a relay that re-sends a row counts it again). */
    publishCounts: (): PublishCounts => ({ ...counts }),
    /** Settles once the rows published by `sendNow` so far are marked sent. */
    marked: flushMarks,
    relayOnce,
    async stop(): Promise<void> {
      running = false;
      for (const gauge of gauges) gauge.remove();
      clearTimeout(notifyTimer);
      wakeUp?.();
      await loop;
      await flushMarks();
      const unlisten = await listening;
      await unlisten?.().catch(() => undefined);
    },
  };
}

export type Relay = ReturnType<typeof createRelay>;

function copyHeaders(source: MsgHdrs): MsgHdrs {
  const copy = natsHeaders();
  for (const key of source.keys()) for (const value of source.values(key)) copy.append(key, value);
  return copy;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
