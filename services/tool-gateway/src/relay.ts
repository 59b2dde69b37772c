import type { JetStreamClient } from '@nats-io/jetstream';
import { and, asc, inArray, isNull, sql } from 'drizzle-orm';
import { SUBJECTS, TASK_VERSION, type DecideTask, type NewEvent } from '@dura/contracts';
import { listenerFor, rowsOf, type Db, type DbHandle, type Unlisten } from '@dura/db';
import { EVENT_TYPE_HEADER } from '@dura/event-store';
import { duraMeter, duraTracer, failpoint, type Logger } from '@dura/service-kit';
import {
  DURA_ATTRS,
  DURA_METRICS,
  contextFromTraceparent,
  declareGauge,
  traceparentOf,
  withProducerSpan,
  withSpan,
} from '@dura/telemetry';
import { outbox } from './db/schema';

/** The channel the outbox trigger (migration 0001) NOTIFYs on commit of every insert. */
export const OUTBOX_CHANNEL = 'dura_outbox';
const LISTEN_RETRY_MS = 1_000;
const FAILED_PASS_PAUSE_MS = 1_000;
const MARK_WINDOW_MS = 2;
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

/**
 * Publishes outbox rows to the run logs with the observation's msg-id, nudges the planner with a decide
 * task, then marks the rows sent. A crash between publish and mark re-publishes, and JetStream drops the
 * duplicate. Several replicas relay side by side without breaking any run's order: a pass takes a
 * transaction-scoped advisory lock per run and relays only the runs it locked, each in outbox-id order.
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
  let marking: { ids: number[]; done: Promise<void> } | undefined;
  const notifyDelayMs = options.notifyDelayMs ?? 50;

  /** Takes the runs of the oldest unsent rows that no other relay is relaying right now. */
  async function lockRuns(tx: Db): Promise<string[]> {
    const result = await tx.execute(sql`
      with candidates as materialized (
        select run_id, min(id) as first_id
        from (select id, run_id from ${outbox} where sent_at is null order by id limit ${batchSize}) oldest
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
    }
    return undefined;
  }

  /**
   * Appends the observation and nudges the planner, in the trace of the tool call that recorded it (its
   * `meta.trace`), so the run's trace goes on through the relay whichever process relays it, and when.
   */
  async function publish(row: Pick<OutboxRow, 'runId' | 'msgId' | 'subject' | 'payload'>): Promise<void> {
    const event = row.payload as NewEvent;
    await withSpan(
      tracer,
      'dura.outbox.relay',
      {
        parent: contextFromTraceparent(event.meta.trace),
        attributes: { [DURA_ATTRS.runId]: row.runId, [DURA_ATTRS.eventType]: event.type },
      },
      async () => {
        const ack = await withProducerSpan(
          tracer,
          { destination: row.subject, destinationTemplate: 'dura.run.{runId}', messageId: row.msgId },
          (headers) => {
            headers.set(EVENT_TYPE_HEADER, event.type);
            return js.publish(row.subject, JSON.stringify(event), {
              msgID: row.msgId,
              headers,
              timeout: PUBLISH_TIMEOUT_MS,
            });
          },
        );
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
      },
    );
  }

  /** One pass: relays up to `batchSize` rows; throws (after recording what was sent) when a publish failed. */
  async function relayOnce(): Promise<number> {
    const { sent, failure } = await db.transaction(async (tx) => {
      const runs = await lockRuns(tx);
      if (runs.length === 0) return { sent: [], failure: undefined };
      // Re-read under the locks: a relay that held one a moment ago may have sent these rows since.
      const rows = await tx
        .select()
        .from(outbox)
        .where(and(isNull(outbox.sentAt), inArray(outbox.runId, runs)))
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
   * Publishes a row its writer just committed, without waiting for a relay pass: the fast path of every
   * tool call. Only for a row with no unsent row of its run ahead of it (`finish` tells), so the run's order
   * holds. A relay pass may publish the same row meanwhile; JetStream drops the second copy by its msg-id.
   * On failure the row stays unsent and the relay takes over.
   */
  async function sendNow(
    row: Pick<OutboxRow, 'id' | 'runId' | 'msgId' | 'subject' | 'payload'>,
  ): Promise<void> {
    try {
      await publish(row);
    } catch (err) {
      log.warn('publishing an observation failed; the relay will retry', { runId: row.runId, err });
      wake();
      return;
    }
    // The same crash point as a pass's: published, not yet marked sent.
    failpoint('relay.after-publish');
    // Not awaited: the caller's work is done once the observation is out. A row published but not yet
    // marked is published again by a later pass, and the log drops the duplicate.
    markSent(row.id).catch((err: unknown) => {
      log.warn('marking published observations sent failed; a later pass re-sends them', { err });
    });
  }

  /** Settles once the rows published by `sendNow` so far are marked sent. */
  function marked(): Promise<void> {
    return marking?.done ?? Promise.resolve();
  }

  /**
   * Marks rows sent in batches: every call within `MARK_WINDOW_MS` of the first shares one UPDATE. Rows a
   * pass holds are skipped, not waited for: that pass publishes and marks them itself, and if its process
   * dies they stay unsent and the next pass publishes them again (the log drops the duplicate).
   */
  function markSent(id: number): Promise<void> {
    if (!marking) {
      const ids: number[] = [];
      const done = new Promise((resolve) => setTimeout(resolve, MARK_WINDOW_MS)).then(async () => {
        marking = undefined;
        const free = db
          .select({ id: outbox.id })
          .from(outbox)
          .where(and(inArray(outbox.id, ids), isNull(outbox.sentAt)))
          .for('update', { skipLocked: true });
        await db.update(outbox).set({ sentAt: new Date() }).where(inArray(outbox.id, free));
      });
      marking = { ids, done };
    }
    marking.ids.push(id);
    return marking.done;
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
    sendNow,
    marked,
    relayOnce,
    async stop(): Promise<void> {
      running = false;
      for (const gauge of gauges) gauge.remove();
      clearTimeout(notifyTimer);
      wakeUp?.();
      await loop;
      await marking?.done.catch(() => undefined);
      const unlisten = await listening;
      await unlisten?.().catch(() => undefined);
    },
  };
}

export type Relay = ReturnType<typeof createRelay>;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
