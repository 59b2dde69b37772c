import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { ContractViolation, DuraError } from '@dura/contracts';
import { DURA_METRICS, declareCounter } from '@dura/telemetry';
import { deadLetterFromMsg, publishDeadLetter } from './dead-letter';
import type { DurableConsumerSpec } from './durable-consumer';
import type { Logger } from './logger';
import { requeue } from './requeue';
import { RetryLater } from './retry-later';
import { duraMeter } from './telemetry';

/** What a failed handler leads to, and what a dead letter needs (see `ConsumerLoopOptions`). */
export interface FailureOptions {
  js: JetStreamClient;
  spec: DurableConsumerSpec;
  source: string;
  log: Logger;
  now: () => Date;
  runIdOf?: ((msg: JsMsg) => string | undefined) | undefined;
  redact?: ((msg: JsMsg) => { payload: Uint8Array; erase: () => Promise<void> } | undefined) | undefined;
}

/**
 * What becomes of a message whose handler threw: a `RetryLater` with `requeue` goes to the back of the
 * stream; a retryable failure is redelivered after its delay (the handler's, or a growing one) until its
 * deliveries run out; a terminal `DuraError`, a stack overflow or the last delivery is dead-lettered with the
 * reason, then terminated.
 */
export function createFailureHandler(options: FailureOptions): (msg: JsMsg, err: unknown) => Promise<void> {
  const { js, spec, log, now } = options;
  const retries = declareCounter(duraMeter(), DURA_METRICS.retries);
  return async (msg: JsMsg, err: unknown): Promise<void> => {
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
