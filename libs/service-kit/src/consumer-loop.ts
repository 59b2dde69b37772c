import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { headers, nanos } from '@nats-io/nats-core';
import { DuraError, ContractViolation } from '@dura/contracts';
import { isJsApiError, JS_CODES } from '@dura/event-store';
import {
  DURA_ATTRS,
  DURA_METRICS,
  contextFromTraceparent,
  declareCounter,
  declareGauge,
  withConsumerSpan,
} from '@dura/telemetry';
import { deadLetterFromMsg, publishDeadLetter } from './dead-letter';
import { duraMeter, duraTracer } from './telemetry';
import type { Logger } from './logger';

/** Thrown by a handler that wants its message again after `delayMs` (a backoff it computed itself). */
export class RetryLater extends DuraError {
  readonly delayMs: number;
  /**
   * The message did not fail, it only has to wait (a throttled call): it goes to the back of the stream as a
   * fresh message instead of a redelivery, so waiting never uses up its bounded deliveries.
   */
  readonly requeue: boolean;
  /** Bytes the requeued copy carries instead of the message's (e.g. a request with its secrets sealed). */
  readonly data: Uint8Array | undefined;
  /** Runs once the copy is published, before the message is acked (e.g. erases it: it held secrets). */
  readonly requeued: (() => Promise<void>) | undefined;

  constructor(
    message: string,
    delayMs: number,
    opts: { requeue?: boolean; data?: Uint8Array; requeued?: () => Promise<void> } = {},
  ) {
    super('retry_later', message, { retryable: true });
    this.delayMs = delayMs;
    this.requeue = opts.requeue ?? false;
    this.data = opts.data;
    this.requeued = opts.requeued;
  }
}

/**
 * Publishes a copy of `msg` with its headers; its msg-id is derived from the original's stream sequence, so a
 * crash between this publish and the ack re-publishes the same id and JetStream drops the duplicate.
 */
async function requeue(js: JetStreamClient, msg: JsMsg, data: Uint8Array = msg.data): Promise<void> {
  const copy = headers();
  for (const key of msg.headers?.keys() ?? [])
    if (key !== 'Nats-Msg-Id') for (const value of msg.headers?.values(key) ?? []) copy.append(key, value);
  // Whoever derives an identity from the message (a run id from its msg-id or sequence) reads the first one.
  const first = firstPublished(msg);
  if (first.msgId) copy.set(REQUEUED_FROM.msgId, first.msgId);
  copy.set(REQUEUED_FROM.seq, String(first.seq));
  // Named after the first msg-id, not the copy's own, so the id keeps its length however often a message waits.
  await js.publish(msg.subject, data, {
    headers: copy,
    msgID: `${first.msgId ?? msg.subject}~q${msg.seq}`,
  });
}

/** Headers a requeued copy carries: the msg-id and stream sequence of the message as first published. */
export const REQUEUED_FROM = { msgId: 'Dura-Requeued-Msg-Id', seq: 'Dura-Requeued-Seq' } as const;

/** The msg-id and stream sequence `msg` had when it was first published, through any requeues. */
export function firstPublished(msg: JsMsg): { msgId: string | undefined; seq: number } {
  const copiedFrom = msg.headers?.get(REQUEUED_FROM.seq);
  const seq = Number(copiedFrom || msg.seq);
  // A copy's own msg-id is the requeue's; a message first published without one has none to pass on.
  const msgId = copiedFrom ? msg.headers?.get(REQUEUED_FROM.msgId) : msg.headers?.get('Nats-Msg-Id');
  return { msgId: msgId || undefined, seq: Number.isSafeInteger(seq) && seq > 0 ? seq : msg.seq };
}

const RESUBSCRIBE_PAUSE_MS = 1_000;
const PULL_EXPIRES_MS = 5_000;

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
  const retries = declareCounter(duraMeter(), DURA_METRICS.retries);
  let pending = 0;
  const pendingGauge = declareGauge(duraMeter(), DURA_METRICS.consumerPending, (observe) =>
    observe(pending, labels),
  );

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

  const onFailure = async (msg: JsMsg, err: unknown): Promise<void> => {
    const deliveries = msg.info.deliveryCount;
    // The same bytes overflow the stack again: a message that got past the limits that way is refused at once.
    const terminal = (err instanceof DuraError && !err.retryable) || isStackOverflow(err);
    if (err instanceof RetryLater && err.requeue) {
      try {
        log.debug('message waits; requeued', { subject: msg.subject, seq: msg.seq, reason: err.message });
        await requeue(js, msg, err.data);
        // Before the ack: a crash in between redelivers the message, and the hook runs again.
        await err.requeued?.();
        msg.ack();
        return;
      } catch (requeueErr) {
        log.warn('requeue failed; redelivering instead', {
          subject: msg.subject,
          seq: msg.seq,
          err: requeueErr,
        });
      }
    }
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
        : isStackOverflow(err)
          ? { code: 'too_deep', message: `handling the message overflowed the call stack: ${err.message}` }
          : {
              code: 'max_deliveries',
              message: `gave up after ${deliveries} deliveries: ${(err as Error)?.message ?? String(err)}`,
            };
    const issues = err instanceof ContractViolation ? err.issues : undefined;
    try {
      const runId = options.runIdOf?.(msg);
      const redacted = options.redact?.(msg);
      await publishDeadLetter(
        js,
        deadLetterFromMsg(redacted ? withData(msg, redacted.payload) : msg, options.source, error, {
          now: now(),
          ...(issues ? { issues } : {}),
          ...(runId ? { runId } : {}),
        }),
      );
      log.error('message dead-lettered', { subject: msg.subject, seq: msg.seq, deliveries, error });
      // Before the term: a crash in between redelivers the message, and it is erased then.
      await redacted?.erase();
      msg.term();
    } catch (dlqErr) {
      log.error('dead-lettering failed; message will be redelivered', { seq: msg.seq, err: dlqErr });
      msg.nak(5000);
    }
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
    .finally(pullsDropped)
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

/** The message as a dead letter sees it, with other bytes. */
export function withData(msg: JsMsg, data: Uint8Array): JsMsg {
  return new Proxy(msg, {
    get: (target, key): unknown => (key === 'data' ? data : (Reflect.get(target, key, target) as unknown)),
  });
}

function isStackOverflow(err: unknown): err is RangeError {
  return err instanceof RangeError && /call stack/i.test(err.message);
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
