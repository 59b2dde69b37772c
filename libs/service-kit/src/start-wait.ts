import { DuraError } from '@dura/contracts';
import { ensureStreams, type StreamOptions } from '@dura/event-store';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from './logger';

export interface StartWaitOptions {
  log: Logger;
  /** Told what the service waits for while it waits (e.g. `/readyz`'s reason), and undefined once through. */
  onWaiting?: (reason: string | undefined) => void;
  /** First pause between attempts; doubles each time up to `maxDelayMs`. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** Pauses between start attempts: 0.5 s doubling to 10 s, so a dependency back after a minute is seen within 10 s. */
export function startBackoffMs(attempt: number, initialMs = 500, maxMs = 10_000): number {
  return Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
}

/**
 * Runs `attempt` until it succeeds, waiting with backoff while it fails with a retryable DuraError (a broker
 * or database not up yet), and logging each failure with the attempt number and the next retry. Anything else
 * (bad credentials, TLS, permissions, configuration) is thrown at once: waiting would not fix it.
 */
export async function waitUntilReachable<T>(
  what: string,
  attempt: () => Promise<T>,
  options: StartWaitOptions,
): Promise<T> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let n = 1; ; n++) {
    try {
      const result = await attempt();
      if (n > 1) options.log.info(`${what} reachable`, { attempts: n });
      options.onWaiting?.(undefined);
      return result;
    } catch (err) {
      if (!(err instanceof DuraError) || !err.retryable) throw err;
      const retryInMs = startBackoffMs(n, options.initialDelayMs, options.maxDelayMs);
      options.onWaiting?.(`waiting for ${what} (attempt ${n} failed: ${err.message})`);
      options.log.warn(`waiting for ${what}; retrying`, {
        attempt: n,
        retryInMs,
        code: err.code,
        reason: err.message,
      });
      await sleep(retryInMs);
    }
  }
}

/**
 * Creates or updates the streams. With `wait`, a JetStream that cannot place them yet (a cluster still
 * electing its meta leader or learning its peers: "no suitable peers for placement") is waited for with
 * backoff, not ready meanwhile; a refusal an operator must fix (R3 on a single server, a denied subject)
 * still stops the start. Without `wait`, the first failure is thrown.
 */
export function ensureStreamsOnStart(
  jsm: JetStreamManager,
  streams: StreamOptions,
  wait: StartWaitOptions | undefined,
): Promise<void> {
  const ensure = () => ensureStreams(jsm, streams);
  return wait ? waitUntilReachable('JetStream to place the streams', ensure, wait) : ensure();
}
