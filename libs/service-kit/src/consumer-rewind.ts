import type { ConsumerConfig, JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { isJsApiError, JS_CODES } from '@dura/event-store';
import { DURA_METRICS, declareCounter } from '@dura/telemetry';
import type { DurableConsumerSpec } from './durable-consumer';
import type { Logger } from './logger';
import { duraMeter } from './telemetry';

/** How often a consumer loop compares its consumer with its stream (10 s). */
export const REWIND_CHECK_MS = 10_000;
/** A consumer seen ahead is looked at again after this long before it is recreated. */
const CONFIRM_MS = 2_000;

export interface RewindGuardOptions {
  js: JetStreamClient;
  spec: DurableConsumerSpec;
  log: Logger;
}

/** Where a consumer stood against its stream when it was found ahead. */
export interface Rewind {
  delivered: number;
  streamLast: number;
}

/**
 * Guards a durable consumer against a stream that lost messages it had stored. nats-server 2.9 can come back from
 * a full disk with a stream's block cut short: the stream's sequence rewinds, while its consumers keep the stream
 * sequence they had delivered. Such a consumer skips every new message up to that sequence; it looks healthy
 * and delivers nothing. A consumer can never be delivered past its stream's last message otherwise, so one seen
 * ahead twice, `CONFIRM_MS` apart (a new stream leader may still be applying its log), is deleted and created again
 * with its own configuration, so it starts over where that says (the stream's first message for the services'
 * consumers, a trigger's creation time for a trigger's). What the stream still holds may be delivered again, which
 * every Dura handler takes (msg-id dedupe, the effect ledger, the expected-sequence guard); a skipped task is a
 * run that never moves.
 *
 * `check()` resolves with the rewind it mended, or undefined when the consumer was not ahead.
 */
export function createRewindGuard(options: RewindGuardOptions): { check(): Promise<Rewind | undefined> } {
  const { spec, log } = options;
  const recreated = declareCounter(duraMeter(), DURA_METRICS.consumerRecreated);
  let jsm: JetStreamManager | undefined;
  // Without the API check, so a look made while the broker is away is not remembered as a failure.
  const manager = async () => (jsm ??= await options.js.jetstreamManager(false));
  // A consumer deleted by a recreation that failed before adding it back: added back by the next look.
  let unfinished: ConsumerConfig | undefined;

  const ahead = async (): Promise<(Rewind & { config: ConsumerConfig }) | undefined> => {
    const m = await manager();
    // The consumer first: the stream's last sequence only grows, so it is read after what it is compared with.
    const consumer = await m.consumers.info(spec.stream, spec.durable);
    const stream = await m.streams.info(spec.stream);
    const delivered = consumer.delivered.stream_seq;
    const streamLast = stream.state.last_seq;
    return delivered > streamLast ? { delivered, streamLast, config: consumer.config } : undefined;
  };

  const recreate = async (config: ConsumerConfig): Promise<void> => {
    const m = await manager();
    unfinished = config;
    await m.consumers.delete(spec.stream, spec.durable).catch((err: unknown) => {
      if (!isJsApiError(err, JS_CODES.consumerNotFound)) throw err;
    });
    await m.consumers.add(spec.stream, config);
    unfinished = undefined;
  };

  return {
    async check() {
      if (unfinished) {
        log.warn(
          `adding back durable consumer ${spec.durable}, which an unfinished recreation left deleted`,
          {
            stream: spec.stream,
            durable: spec.durable,
          },
        );
        await recreate(unfinished);
        return undefined;
      }
      if (!(await ahead())) return undefined;
      await new Promise((resolve) => setTimeout(resolve, CONFIRM_MS));
      const found = await ahead();
      if (!found) return undefined;
      const { config, ...rewind } = found;
      log.error(
        `durable consumer ${spec.durable} had been delivered up to stream sequence ${rewind.delivered}, but stream ` +
          `${spec.stream} ends at ${rewind.streamLast}: the stream lost messages it had stored (a full or failed ` +
          'disk), and the consumer would skip every new message up to its old sequence. Recreating it with its ' +
          "configuration; messages still stored may be delivered again. Check the NATS server's disk.",
        { stream: spec.stream, durable: spec.durable, ...rewind },
      );
      await recreate(config);
      recreated.add(1, { stream: spec.stream, consumer: spec.durable });
      return rewind;
    },
  };
}

/**
 * Looks for a rewind every `everyMs` (`REWIND_CHECK_MS`) until stopped, one look at a time; `onMended` runs after
 * a recreation (the loop subscribes again). A failed look is no verdict: the next one decides.
 */
export function watchRewinds(
  options: RewindGuardOptions & { everyMs?: number | undefined; onMended: () => Promise<void> | undefined },
): { stop(): void } {
  const guard = createRewindGuard(options);
  let checking = false;
  let stopped = false;
  const look = async (): Promise<void> => {
    if (checking || stopped) return;
    checking = true;
    try {
      if ((await guard.check()) && !stopped) await options.onMended();
    } catch (err) {
      options.log.debug('could not compare the consumer with its stream; trying again later', {
        durable: options.spec.durable,
        err,
      });
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void look(), options.everyMs ?? REWIND_CHECK_MS);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
