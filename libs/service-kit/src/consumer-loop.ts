import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { DuraError, ContractViolation } from '@dura/contracts';
import { isJsApiError, JS_CODES } from '@dura/event-store';
import { DURA_ATTRS, DURA_METRICS, declareCounter, declareGauge, withConsumerSpan } from '@dura/telemetry';
import { deadLetterFromMsg, publishDeadLetter } from './dead-letter';
import { duraMeter, duraTracer } from './telemetry';
import type { Logger } from './logger';

/** Thrown by a handler that wants its message again after `delayMs` (a backoff it computed itself). */
export class RetryLater extends DuraError {
  readonly delayMs: number;

  constructor(message: string, delayMs: number) {
    super('retry_later', message, { retryable: true });
    this.delayMs = delayMs;
  }
}

const RESUBSCRIBE_PAUSE_MS = 1_000;

export interface DurableConsumerSpec {
  stream: string;
  durable: string;
  filterSubject: string;
  /** Deliveries before a message is dead-lettered. */
  maxDeliver: number;
  ackWaitMs: number;
  maxAckPending?: number;
}

/** Creates the durable pull consumer, or updates it when its settings changed. Safe from every replica. */
export async function ensureDurableConsumer(jsm: JetStreamManager, spec: DurableConsumerSpec): Promise<void> {
  const config = {
    durable_name: spec.durable,
    filter_subject: spec.filterSubject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    // One more than ours, so the server never drops a message we have not dead-lettered yet.
    max_deliver: spec.maxDeliver + 1,
    ack_wait: nanos(spec.ackWaitMs),
    max_ack_pending: spec.maxAckPending ?? 1000,
  };
  try {
    await jsm.consumers.info(spec.stream, spec.durable);
    await jsm.consumers.update(spec.stream, spec.durable, {
      max_deliver: config.max_deliver,
      ack_wait: config.ack_wait,
      max_ack_pending: config.max_ack_pending,
    });
  } catch (err) {
    if (!isJsApiError(err, JS_CODES.consumerNotFound)) throw err;
    await jsm.consumers.add(spec.stream, config);
  }
}

export interface ConsumerLoopOptions {
  js: JetStreamClient;
  spec: DurableConsumerSpec;
  /** Source name used for dead letters: `dura.dlq.<source>`. */
  source: string;
  concurrency: number;
  log: Logger;
  handle: (msg: JsMsg) => Promise<void>;
  now?: () => Date;
  /** Extracts a run id for the dead-letter record, when the message names one. */
  runIdOf?: (msg: JsMsg) => string | undefined;
}

export interface ConsumerLoop {
  stop(): Promise<void>;
  readonly done: Promise<void>;
}

/**
 * Pulls messages and runs `handle` on each, at most `concurrency` at a time. Success acks. A terminal
 * `DuraError` (or too many deliveries) sends the message to the dead-letter stream with the reason, then
 * terminates it; anything else is redelivered after a growing delay. Nothing wedges the consumer.
 */
export function startConsumerLoop(options: ConsumerLoopOptions): ConsumerLoop {
  const { js, spec, log } = options;
  const now = options.now ?? (() => new Date());
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let close: (() => Promise<void>) | undefined;

  const labels = { stream: spec.stream, consumer: spec.durable };
  const redeliveries = declareCounter(duraMeter(), DURA_METRICS.consumerRedeliveries);
  const retries = declareCounter(duraMeter(), DURA_METRICS.retries);
  let pending = 0;
  const pendingGauge = declareGauge(duraMeter(), DURA_METRICS.consumerPending, (observe) =>
    observe(pending, labels),
  );

  const process = async (msg: JsMsg): Promise<void> => {
    const heartbeat = setInterval(() => msg.working(), Math.max(1000, spec.ackWaitMs / 2));
    pending = msg.info.pending;
    if (msg.info.deliveryCount > 1) redeliveries.add(1, labels);
    try {
      // The producer's trace context travels in the headers: the handler's spans and logs join its trace.
      await withConsumerSpan(
        duraTracer(),
        {
          destination: msg.subject,
          destinationTemplate: spec.filterSubject,
          consumerGroup: spec.durable,
          headers: msg.headers,
          attributes: { [DURA_ATTRS.deliveryCount]: msg.info.deliveryCount },
          ...(msg.headers?.get('Nats-Msg-Id') ? { messageId: msg.headers.get('Nats-Msg-Id') } : {}),
        },
        () => options.handle(msg),
      );
      msg.ack();
    } catch (err) {
      await onFailure(msg, err);
    } finally {
      clearInterval(heartbeat);
    }
  };

  const onFailure = async (msg: JsMsg, err: unknown): Promise<void> => {
    const deliveries = msg.info.deliveryCount;
    const terminal = err instanceof DuraError && !err.retryable;
    if (!terminal && deliveries < spec.maxDeliver) {
      const delay =
        err instanceof RetryLater
          ? err.delayMs
          : Math.min(30_000, 250 * 2 ** (deliveries - 1)) * (0.5 + Math.random() / 2);
      log.warn('message failed; will retry', { subject: msg.subject, seq: msg.seq, deliveries, err });
      retries.add(1, { operation: spec.durable });
      msg.nak(Math.round(delay));
      return;
    }
    const error =
      err instanceof DuraError
        ? { code: err.code, message: err.message }
        : {
            code: 'max_deliveries',
            message: `gave up after ${deliveries} deliveries: ${(err as Error)?.message ?? String(err)}`,
          };
    const issues = err instanceof ContractViolation ? err.issues : undefined;
    try {
      const runId = options.runIdOf?.(msg);
      await publishDeadLetter(
        js,
        deadLetterFromMsg(msg, options.source, error, {
          now: now(),
          ...(issues ? { issues } : {}),
          ...(runId ? { runId } : {}),
        }),
      );
      log.error('message dead-lettered', { subject: msg.subject, seq: msg.seq, deliveries, error });
      msg.term();
    } catch (dlqErr) {
      log.error('dead-lettering failed; message will be redelivered', { seq: msg.seq, err: dlqErr });
      msg.nak(5000);
    }
  };

  const consumeOnce = async (): Promise<void> => {
    const consumer = await js.consumers.get(spec.stream, spec.durable);
    const messages = await consumer.consume({ max_messages: Math.max(10, options.concurrency * 2) });
    close = async () => {
      await messages.close();
    };
    if (stopped) await close();
    for await (const msg of messages) {
      const task = process(msg).finally(() => inFlight.delete(task));
      inFlight.add(task);
      if (inFlight.size >= options.concurrency) await Promise.race(inFlight);
      if (stopped) break;
    }
  };

  // A subscription can end or fail under us (the broker restarted, the consumer was briefly missing):
  // subscribe again for as long as the loop is meant to run, or the service would idle while looking alive.
  const run = async (): Promise<void> => {
    while (!stopped) {
      try {
        await consumeOnce();
        if (!stopped) log.warn('consumer subscription ended; subscribing again', { durable: spec.durable });
      } catch (err) {
        if (stopped) break;
        log.warn('consumer subscription failed; subscribing again', { durable: spec.durable, err });
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, RESUBSCRIBE_PAUSE_MS));
    }
    await Promise.allSettled(inFlight);
  };

  const done = run().catch((err: unknown) => {
    if (!stopped) log.error('consumer loop ended', { durable: spec.durable, err });
    throw err;
  });
  return {
    done,
    async stop() {
      stopped = true;
      pendingGauge.remove();
      await close?.();
      await done.catch(() => undefined);
      await Promise.allSettled(inFlight);
    },
  };
}
