import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import {
  DURA_ATTRS,
  DURA_METRICS,
  contextFromTraceparent,
  declareCounter,
  declareGauge,
  withConsumerSpan,
} from '@dura/telemetry';
import { watchRewinds } from './consumer-rewind';
import type { DurableConsumerSpec } from './durable-consumer';
import type { Logger } from './logger';
import { createFailureHandler } from './message-failure';
import { duraMeter, duraTracer } from './telemetry';

const RESUBSCRIBE_PAUSE_MS = 1_000;
const PULL_EXPIRES_MS = 5_000;

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
  /**
   * The W3C traceparent a message carries on, looked up before its span starts (e.g. the run a signal is
   * for, from its log): the span joins that trace whoever sent the message, with the sender's own context
   * as a link. Undefined, or a failed look-up: the headers' context alone.
   */
  continuesTrace?: (msg: JsMsg) => Promise<string | undefined>;
  /** How long `stop()` without a deadline waits for running handlers before handing them back (20 s). */
  drainMs?: number;
  /**
   * For messages that may hold secrets in clear: what a dead letter keeps instead of the message's bytes,
   * and how to erase the message once it is dead-lettered. Undefined when the message holds none.
   */
  redact?: (msg: JsMsg) => { payload: Uint8Array; erase: () => Promise<void> } | undefined;
  /** How often the consumer is compared with its stream, to mend a stream that rewound (consumer-rewind.ts; 10 s). */
  rewindCheckMs?: number;
}

/** How long a stop may take: handlers still running at `deadline` (epoch ms) are handed back. */
export interface DrainOptions {
  deadline: number;
}

/** What a stop did with the work it found. */
export interface DrainReport {
  /** Handlers running at the stop that ended (acked, retried or dead-lettered) before the deadline. */
  finished: number;
  /**
   * Messages whose handlers still ran at the deadline: nak'ed, so another replica gets them at once. The
   * handler is not interrupted, but its outcome no longer acks or naks anything.
   */
  handedBack: JsMsg[];
  /** Messages fetched but not yet started when the loop stopped: nak'ed as soon as the broker dropped our pulls. */
  unstarted: number;
}

export interface ConsumerLoop {
  /** Stops fetching at once, lets running handlers finish until the deadline, then hands back the rest. */
  stop(drain?: DrainOptions): Promise<DrainReport>;
  readonly done: Promise<void>;
}

const DEFAULT_DRAIN_MS = 20_000;
const MIN_CLOSE_WAIT_MS = 250;

interface Running {
  msg: JsMsg;
  heartbeat: NodeJS.Timeout;
  handedBack: boolean;
}

/**
 * Pulls messages and runs `handle` on each, at most `concurrency` at a time. Success acks. A terminal
 * `DuraError` (or too many deliveries) sends the message to the dead-letter stream with the reason, then
 * terminates it; anything else is redelivered after a growing delay. Nothing wedges the consumer.
 */
export function startConsumerLoop(options: ConsumerLoopOptions): ConsumerLoop {
  const { js, spec, log } = options;
  const now = options.now ?? (() => new Date());
  const running = new Map<Promise<void>, Running>();
  let stopped = false;
  let stopping: Promise<DrainReport> | undefined;
  let unstarted = 0;
  let close: (() => Promise<void>) | undefined;
  let wakeStopped: () => void = () => undefined;
  const stoppedSignal = new Promise<void>((resolve) => (wakeStopped = resolve));
  let pullsDropped: () => void = () => undefined;
  const pullsDroppedSignal = new Promise<void>((resolve) => (pullsDropped = resolve));

  const labels = { stream: spec.stream, consumer: spec.durable };
  const redeliveries = declareCounter(duraMeter(), DURA_METRICS.consumerRedeliveries);
  let pending = 0;
  const pendingGauge = declareGauge(duraMeter(), DURA_METRICS.consumerPending, (observe) =>
    observe(pending, labels),
  );

  const onFailure = createFailureHandler({
    js,
    spec,
    source: options.source,
    log,
    now,
    runIdOf: options.runIdOf,
    redact: options.redact,
  });

  const process = async (entry: Running): Promise<void> => {
    const { msg } = entry;
    pending = msg.info.pending;
    if (msg.info.deliveryCount > 1) redeliveries.add(1, labels);
    try {
      const continues = await continuedTrace(msg);
      // The producer's trace context travels in the headers: the handler's spans and logs join its trace.
      await withConsumerSpan(
        duraTracer(),
        {
          destination: msg.subject,
          destinationTemplate: spec.filterSubject,
          consumerGroup: spec.durable,
          headers: msg.headers,
          ...(continues ? { continues: contextFromTraceparent(continues) } : {}),
          attributes: { [DURA_ATTRS.deliveryCount]: msg.info.deliveryCount },
          ...(msg.headers?.get('Nats-Msg-Id') ? { messageId: msg.headers.get('Nats-Msg-Id') } : {}),
        },
        () => options.handle(msg),
      );
      if (!entry.handedBack) msg.ack();
    } catch (err) {
      // Handed back at the drain deadline: another replica owns the message now.
      if (!entry.handedBack) await onFailure(msg, err);
    } finally {
      clearInterval(entry.heartbeat);
    }
  };

  // A stream that lost stored messages leaves the consumer past its end: mended, and subscribed to again.
  const rewinds = watchRewinds({ js, spec, log, everyMs: options.rewindCheckMs, onMended: () => close?.() });

  const continuedTrace = async (msg: JsMsg): Promise<string | undefined> => {
    try {
      return await options.continuesTrace?.(msg);
    } catch (err) {
      log.debug('no trace to continue for the message; using its headers', { subject: msg.subject, err });
      return undefined;
    }
  };

  const start = (msg: JsMsg): void => {
    const entry: Running = {
      msg,
      handedBack: false,
      heartbeat: setInterval(() => msg.working(), Math.max(1000, spec.ackWaitMs / 2)),
    };
    const task = process(entry).finally(() => running.delete(task));
    running.set(task, entry);
  };

  const consumeOnce = async (): Promise<void> => {
    const consumer = await js.consumers.get(spec.stream, spec.durable);
    if (stopped) return;
    // Pull requests expire after 5 s (not the default 30 s): when the consumer's leader node dies, its
    // pending pulls die with it, and a short expiry re-pulls from the new leader within seconds.
    const messages = await consumer.consume({
      max_messages: Math.max(10, options.concurrency * 2),
      expires: PULL_EXPIRES_MS,
    });
    close = async () => {
      await messages.close();
    };
    // Not awaited: closing completes inside the iteration below, which first yields what was fetched.
    if (stopped) void close().catch(() => undefined);
    const fetched: JsMsg[] = [];
    for await (const msg of messages) {
      // Fetched before the stop but not started: handed back below, for another replica.
      if (stopped) {
        fetched.push(msg);
        unstarted += 1;
        continue;
      }
      start(msg);
      if (running.size >= options.concurrency) await Promise.race([...running.keys(), stoppedSignal]);
    }
    if (!stopped) return;
    // Closing only unsubscribes, and nats-server 2.9 keeps our pull requests waiting. A message nak'ed meanwhile can
    // be taken for one of them, found to have no reader, and left to its ack wait, while the consumer steps back and
    // delivers the message before it once more (fixed in nats-server 2.10.16). The server answers a consumer info
    // only after reading our unsubscribe and the pulls sent before the info, and answering drops unread requests.
    await consumer.info().catch(() => undefined);
    pullsDropped();
    for (const msg of fetched) msg.nak();
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
      if (!stopped) await pause(RESUBSCRIBE_PAUSE_MS, stoppedSignal);
    }
  };

  /** Waits for the running handlers until `deadline`; hands back (naks) those still running then. */
  const settleBy = async (deadline: number): Promise<JsMsg[]> => {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    });
    const settled = await Promise.race([Promise.allSettled(running.keys()).then(() => true), expired]);
    clearTimeout(timer);
    if (!settled) {
      const late = [...running.values()];
      for (const entry of late) {
        entry.handedBack = true;
        clearInterval(entry.heartbeat);
      }
      // Nak'ed before the server dropped our pull requests, a message can be held until its ack wait (see above);
      // a broker that does not answer must not hold the stop long past its deadline.
      await pause(MIN_CLOSE_WAIT_MS, pullsDroppedSignal);
      for (const entry of late) entry.msg.nak();
      log.warn(`drain deadline reached: handed back ${late.length} running messages`, {
        durable: spec.durable,
        messages: late.map((entry) => ({ subject: entry.msg.subject, seq: entry.msg.seq })),
      });
      return late.map((entry) => entry.msg);
    }
    return [];
  };

  const drain = async (deadline: number): Promise<DrainReport> => {
    const began = Date.now();
    stopped = true;
    wakeStopped();
    rewinds.stop();
    pendingGauge.remove();
    void close?.().catch(() => undefined);
    const inFlight = running.size;
    log.info(`draining: ${inFlight} in flight`, {
      durable: spec.durable,
      inFlight,
      deadlineInMs: Math.max(0, deadline - began),
    });
    const handedBack = await settleBy(deadline);
    // The subscription ends once what it had fetched is handed back; a broker that does not answer must not
    // hold the stop past its deadline.
    await pause(
      Math.max(MIN_CLOSE_WAIT_MS, deadline - Date.now()),
      done.catch(() => undefined),
    );
    const report = { finished: inFlight - handedBack.length, handedBack, unstarted };
    log.info(`drained in ${Date.now() - began} ms`, {
      durable: spec.durable,
      finished: report.finished,
      handedBack: handedBack.length,
      unstarted,
    });
    return report;
  };

  // Once the loop ends, nothing is left to wait for before a hand-back.
  const done = run()
    .finally(() => {
      rewinds.stop();
      pullsDropped();
    })
    .catch((err: unknown) => {
      if (!stopped) log.error('consumer loop ended', { durable: spec.durable, err });
      throw err;
    });
  return {
    done,
    stop(drainOptions) {
      stopping ??= drain(drainOptions?.deadline ?? Date.now() + (options.drainMs ?? DEFAULT_DRAIN_MS));
      return stopping;
    },
  };
}

/** Resolves after `ms`, or earlier when `interrupt` settles; leaves no timer behind. */
function pause(ms: number, interrupt?: Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, ms));
    void interrupt?.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
