import type { JetStreamClient } from '@nats-io/jetstream';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { listenerFor, rowsOf, type Db, type DbHandle } from '@dura/db';
import { duraMeter, failpoint, type Logger } from '@dura/service-kit';
import { DURA_METRICS, declareCounter, declareGauge, type MetricSpec } from '@dura/telemetry';
import { outbox } from './db/schema';
import { createOutboxMarks } from './outbox-marks';
import { createObservationPublisher, type OutboxRow, type SentObservation } from './outbox-publish';
import { createRelayPass } from './relay-pass';
import { createWakeLoop } from './wake-loop';

export type { SentObservation } from './outbox-publish';

/** The channel the outbox trigger (migration 0001) NOTIFYs on commit of every insert. */
export const OUTBOX_CHANNEL = 'dura_outbox';
const FAILED_PASS_PAUSE_MS = 1_000;

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

/** tool-gateway: observations published, by who published them: the row's writer at once, or a relay pass. */
export const OBSERVATIONS_PUBLISHED = {
  name: 'dura_observations_published',
  description:
    'Observations published to the run logs, by path: fast_path (an outbox row, by its writer right after its commit), relay (an outbox row, by a relay pass) or unrecorded (a read-only call run in place, whose result is kept in the log alone)',
  labels: ['path'],
} satisfies MetricSpec<'path'>;

/** How many observations this relay published by each path (the counter's values, for this process). */
export interface PublishCounts {
  fastPath: number;
  relay: number;
}

/**
 * Publishes outbox rows to the run logs with the observation's msg-id, nudges the planner with a decide
 * task, then marks the rows sent. A crash between publish and mark re-publishes, and JetStream drops the
 * duplicate. Passes (`relayOnce`, see `createRelayPass`) run when a commit is notified, when woken, and at
 * each poll. A row its writer claimed (see `FAST_PATH_LEASE_MS`) is the writer's to publish (`sendNow`):
 * passes leave it and the rows of its run behind it until the writer marks it sent (`marks`), gives it
 * back, or its claim runs out.
 */
export function createRelay(options: RelayOptions) {
  const { db, js, log } = options;
  const pollMs = options.pollMs ?? 250;
  const batchSize = options.batchSize ?? 100;
  const listen = options.listen ?? listenerFor(db);
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
  const loop = createWakeLoop({
    listen,
    channel: OUTBOX_CHANNEL,
    onNotify: notified,
    log,
    listenWarning: 'cannot LISTEN for outbox commits yet; polling meanwhile',
    turn: pass,
  });
  const { wake } = loop;
  let notifyTimer: NodeJS.Timeout | undefined;
  const notifyDelayMs = options.notifyDelayMs ?? 50;
  const published = declareCounter(duraMeter(), OBSERVATIONS_PUBLISHED);
  const counts: PublishCounts = { fastPath: 0, relay: 0 };
  const publish = createObservationPublisher(js);
  const marks = createOutboxMarks({ db, log, onRowsBehind: () => wake() });
  const relayOnce = createRelayPass({
    db,
    batchSize,
    publish,
    onPublished: () => {
      counts.relay += 1;
      published.add(1, { path: 'relay' });
    },
  });

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
    // The same crash point as a pass's: published, not yet marked sent.
    failpoint('relay.after-publish');
    // Not awaited: the caller's work is done once the observation is out. A row published but not yet
    // marked is published again by a pass once its claim runs out, and the log drops the duplicate.
    marks.published(row.id);
    return sent;
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
   * A commit elsewhere: its writer normally publishes the row itself right away (`sendNow`), so the pass
   * waits a moment instead of racing it, and takes whatever is still unsent then, in one batch.
   */
  function notified(): void {
    if (notifyTimer || !loop.running) return;
    notifyTimer = setTimeout(() => {
      notifyTimer = undefined;
      wake();
    }, notifyDelayMs);
  }

  /** One relay pass; then a nap unless the batch was full (more rows wait), a short one after a failure. */
  async function pass(): Promise<number | undefined> {
    let sent: number;
    try {
      sent = await relayOnce();
    } catch (err) {
      log.warn('relay pass failed; retrying', { err });
      return FAILED_PASS_PAUSE_MS;
    }
    return sent < batchSize ? pollMs : undefined;
  }

  return {
    start(): void {
      loop.start();
    },
    /** Relays at once instead of at the next notification or poll. */
    wake,
    /** The marks of rows `sendNow` published, which a result's commit may write with its own. */
    marks,
    sendNow,
    /** Writes the marks not written yet now (a row waits behind them for a pass); settles when all are written. */
    flushMarks: marks.flush,
    /** Observations this relay published so far, by path (a relay that re-sends a row counts it again). */
    publishCounts: (): PublishCounts => ({ ...counts }),
    /** Settles once the rows published by `sendNow` so far are marked sent. */
    marked: marks.flush,
    relayOnce,
    async stop(): Promise<void> {
      for (const gauge of gauges) gauge.remove();
      clearTimeout(notifyTimer);
      await loop.stop();
      await marks.flush();
      await loop.unlisten();
    },
  };
}

export type Relay = ReturnType<typeof createRelay>;
