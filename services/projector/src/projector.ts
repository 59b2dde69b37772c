import { DeliverPolicy, type JetStreamClient, type ConsumerMessages } from '@nats-io/jetstream';
import { runIdFromSubject, STREAMS, SUBJECTS } from '@dura/contracts';
import type { Db } from '@dura/db';
import { DEFAULT_STREAM_OPTIONS, type StreamOptions } from '@dura/event-store';
import type { JetStreamManager } from '@nats-io/jetstream';
import {
  duraMeter,
  duraTracer,
  ensureStreamsOnStart,
  type Logger,
  type StartWaitOptions,
} from '@dura/service-kit';
import { rowsOf } from '@dura/db';
import {
  DURA_ATTRS,
  DURA_METRICS,
  MESSAGING_OPERATION,
  contextFromTraceparent,
  declareGauge,
  messagingAttributes,
} from '@dura/telemetry';
import { SpanKind } from '@opentelemetry/api';
import { sql } from 'drizzle-orm';
import { applyBatch, heldStates, readCheckpoint, type StreamMessage } from './projection';
import { runs } from './db/schema';

export interface ProjectorDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  db: Db;
  log: Logger;
  batchSize?: number;
  /**
   * How long a batch that caught up with the stream may wait for more events before it is written (default
   * `DEFAULT_LINGER_MS`; 0 writes at once). Runs that append one event at a time then share transactions.
   */
  lingerMs?: number;
  streams?: StreamOptions;
  /** Set by a service's main: start waits (not ready) while a JetStream cluster cannot place the streams yet. */
  startWait?: StartWaitOptions;
}

/**
 * The projection trails the log by at most this much more when events trickle in one at a time, and each
 * transaction takes what arrived meanwhile: under a steady trickle that is several events per commit
 * instead of one, which is most of what the projector and Postgres spend per event.
 */
export const DEFAULT_LINGER_MS = 50;

/** How long the projector may see no message while the stream is ahead of it before it re-subscribes. */
const STALL_MS = 5_000;

/**
 * Folds every run event into Postgres. Reads the run stream in order from its stored checkpoint with an
 * ordered consumer (no acks to lose: the checkpoint in Postgres is the only position), and applies batches
 * in one transaction each, flushing whenever it has caught up with the stream. Whenever the subscription
 * falters (the broker restarted, the ordered consumer was recreated, or nothing arrives while the stream is
 * ahead) it re-subscribes from the checkpoint: rather than trust the client's recovery, start again from
 * the one position that is known to be right.
 */
export function createProjector(deps: ProjectorDeps) {
  const batchSize = deps.batchSize ?? 500;
  const lingerMs = deps.lingerMs ?? DEFAULT_LINGER_MS;
  let messages: ConsumerMessages | undefined;
  let loop: Promise<void> | undefined;
  let watchdog: NodeJS.Timeout | undefined;
  let stopping = false;
  let position = 0;
  let lastProgress = Date.now();
  let applying = false;
  let pending = 0;
  const tracer = duraTracer();
  const pendingGauge = declareGauge(duraMeter(), DURA_METRICS.consumerPending, (observe) =>
    observe(pending, { stream: STREAMS.runs, consumer: 'projector' }),
  );
  // Read from the read model at scrape time.
  const runsGauge = declareGauge(duraMeter(), DURA_METRICS.runsByStatus, async (observe) => {
    const rows = rowsOf<{ status: string; runs: number }>(
      await deps.db.execute(sql`select status, count(*)::int as runs from ${runs} group by status`),
    );
    for (const row of rows) observe(row.runs, { status: row.status });
  });

  /**
   * One span per projected event, in the trace of the span that appended it (its `traceparent` header),
   * covering the batch's transaction: a run's trace shows when each of its events became queryable.
   */
  function traceProjection(batch: readonly StreamMessage[], began: number): void {
    const ended = Date.now();
    for (const msg of batch) {
      const runId = runIdFromSubject(msg.subject);
      tracer
        .startSpan(
          'dura.project',
          {
            kind: SpanKind.CONSUMER,
            startTime: began,
            attributes: {
              ...messagingAttributes({
                operationType: MESSAGING_OPERATION.process,
                operationName: 'project',
                destination: msg.subject,
                destinationTemplate: 'dura.run.{runId}',
                consumerGroup: 'projector',
              }),
              [DURA_ATTRS.eventSeq]: msg.seq,
              ...(runId ? { [DURA_ATTRS.runId]: runId } : {}),
              'dura.projection.batch_size': batch.length,
            },
          },
          contextFromTraceparent(msg.traceparent),
        )
        .end(ended);
    }
  }

  // The states this projector stored last: a batch reads back only what it does not hold at the stored seq.
  const held = heldStates();

  async function applyWithRetry(batch: StreamMessage[]): Promise<void> {
    applying = true;
    try {
      for (let attempt = 1; ; attempt += 1) {
        try {
          const began = Date.now();
          position = (await applyBatch(deps.db, batch, held)).checkpoint;
          traceProjection(batch, began);
          lastProgress = Date.now();
          return;
        } catch (err) {
          if (stopping) throw err;
          deps.log.warn('projection batch failed; retrying', { attempt, firstSeq: batch[0]?.seq, err });
          await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 200 * attempt)));
        }
      }
    } finally {
      applying = false;
    }
  }

  async function run(source: ConsumerMessages): Promise<void> {
    let batch: StreamMessage[] = [];
    let batchStarted = 0;
    for await (const msg of source) {
      lastProgress = Date.now();
      if (batch.length === 0) batchStarted = lastProgress;
      const traceparent = msg.headers?.get('traceparent');
      batch.push({
        seq: msg.seq,
        subject: msg.subject,
        data: msg.data,
        ...(traceparent ? { traceparent } : {}),
      });
      pending = msg.info.pending;
      // Flush once caught up: nothing left on the server, nor delivered and waiting in our buffer (events
      // that arrived while the previous batch was being written go into the same transaction).
      const full = batch.length >= batchSize;
      if (full || (msg.info.pending === 0 && source.getPending() <= 1)) {
        // Caught up with a young batch: give the events on their way a moment to join it.
        const wait = full ? 0 : batchStarted + lingerMs - Date.now();
        if (wait > 0) {
          await new Promise((resolve) => setTimeout(resolve, wait));
          if (source.getPending() > 1 && !stopping) continue;
        }
        await applyWithRetry(batch);
        batch = [];
      }
    }
  }

  /** An ordered consumer from the checkpoint on; closed (and so re-subscribed) when it resets itself. */
  async function subscribe(): Promise<ConsumerMessages> {
    const consumer = await deps.js.consumers.get(STREAMS.runs, {
      filter_subjects: SUBJECTS.allRuns,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: position + 1,
    });
    const source = await consumer.consume({ max_messages: Math.max(batchSize, 100) });
    void (async () => {
      // nats.js 3.4 recreates a reset ordered consumer with its old pull accounting, which then asks for a
      // handful of messages per 30 s; our own subscription from the checkpoint has no such state.
      for await (const status of source.status()) {
        if (status.type === 'ordered_consumer_recreated' || status.type === 'reset') {
          deps.log.warn('projection subscription was reset; re-subscribing from the checkpoint', {
            status: status.type,
          });
          await source.close();
          return;
        }
      }
    })().catch(() => undefined);
    lastProgress = Date.now();
    return source;
  }

  /** Re-subscribes whenever the subscription ends while the projector is meant to run. */
  async function supervise(first: ConsumerMessages): Promise<void> {
    let source: ConsumerMessages | undefined = first;
    while (!stopping) {
      try {
        source ??= messages = await subscribe();
        await run(source);
      } catch (err) {
        if (stopping) return;
        deps.log.warn('projection subscription failed; re-subscribing', { err });
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      source = undefined;
    }
  }

  /** Closes a subscription that delivers nothing while the stream holds events past the checkpoint. */
  async function checkStall(): Promise<void> {
    if (stopping || applying || Date.now() - lastProgress < STALL_MS) return;
    const info = await deps.jsm.streams.info(STREAMS.runs).catch(() => undefined);
    if (!info || info.state.last_seq <= position || Date.now() - lastProgress < STALL_MS) return;
    deps.log.warn('projection stalled behind the stream; re-subscribing from the checkpoint', {
      position,
      streamLastSeq: info.state.last_seq,
    });
    lastProgress = Date.now();
    await messages?.close();
  }

  return {
    /** Stream sequence up to which the read model is complete. */
    position: () => position,
    async start(): Promise<void> {
      await ensureStreamsOnStart(deps.jsm, deps.streams ?? DEFAULT_STREAM_OPTIONS, deps.startWait);
      position = await readCheckpoint(deps.db);
      messages = await subscribe();
      loop = supervise(messages).catch((err: unknown) => {
        if (!stopping) deps.log.error('projection loop ended', { err });
      });
      watchdog = setInterval(() => void checkStall().catch(() => undefined), STALL_MS);
      deps.log.info('projector started', { fromSeq: position + 1 });
    },
    async stop(): Promise<void> {
      stopping = true;
      clearInterval(watchdog);
      pendingGauge.remove();
      runsGauge.remove();
      await messages?.close();
      await loop;
    },
  };
}

export type Projector = ReturnType<typeof createProjector>;
