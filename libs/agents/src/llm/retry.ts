import { setTimeout as delay } from 'node:timers/promises';
import { DuraError } from '@dura/contracts';
import { AttemptFailure, abortedError, finalError, type CallTarget } from './errors';
import type { ProviderSettings } from './types';

/** Provider settings with every default filled in. */
export interface ResolvedSettings {
  apiKey?: string;
  headers: Record<string, string>;
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  timeoutMs: number;
  fetch: typeof fetch;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  onRateLimited?: ProviderSettings['onRateLimited'];
}

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> => delay(ms, undefined, { signal });

export function resolveSettings(settings: ProviderSettings): ResolvedSettings {
  const resolved: ResolvedSettings = {
    apiKey: settings.apiKey,
    headers: settings.headers ?? {},
    maxAttempts: settings.maxAttempts ?? 5,
    initialBackoffMs: settings.initialBackoffMs ?? 500,
    maxBackoffMs: settings.maxBackoffMs ?? 60_000,
    timeoutMs: settings.timeoutMs ?? 600_000,
    fetch: settings.fetch ?? globalThis.fetch,
    sleep: settings.sleep ?? defaultSleep,
    ...(settings.onRateLimited ? { onRateLimited: settings.onRateLimited } : {}),
  };
  if (!Number.isInteger(resolved.maxAttempts) || resolved.maxAttempts < 1)
    throw new Error(`maxAttempts must be a whole number of at least 1, got ${resolved.maxAttempts}`);
  for (const key of ['initialBackoffMs', 'maxBackoffMs', 'timeoutMs'] as const)
    if (!(resolved[key] >= 0))
      throw new Error(`${key} must be a number of milliseconds, got ${resolved[key]}`);
  return resolved;
}

/** How long the provider asked us to wait: `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = Number(headers.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with jitter: attempt 1 waits 50–100% of `initial`, each later one twice as long, capped. */
export function backoffMs(
  failedAttempt: number,
  settings: Pick<ResolvedSettings, 'initialBackoffMs' | 'maxBackoffMs'>,
  random: () => number = Math.random,
): number {
  const base = Math.min(settings.maxBackoffMs, settings.initialBackoffMs * 2 ** (failedAttempt - 1));
  return Math.round(base / 2 + (random() * base) / 2);
}

/**
 * Runs `attempt` until it succeeds, fails for good, or `maxAttempts` are used up. `AttemptFailure`s decide
 * what happens next; anything else is a bug and goes straight through. An abort ends the loop at once.
 */
export async function withRetries<T>(
  target: CallTarget,
  settings: ResolvedSettings,
  signal: AbortSignal | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  let attempts = 0;
  for (;;) {
    if (signal?.aborted) throw abortedError(target, signal);
    attempts += 1;
    let failure: AttemptFailure;
    const began = performance.now();
    try {
      return await attempt();
    } catch (err) {
      if (signal?.aborted) throw abortedError(target, signal);
      if (!(err instanceof AttemptFailure)) throw err;
      failure = err;
    }
    assertNotStalled(target, performance.now() - began, settings.timeoutMs, attempts);
    if (failure.status === 429)
      settings.onRateLimited?.({ provider: target.provider, model: target.model }, failure.retryAfterMs);
    if (failure.kind === 'rejected' || attempts >= settings.maxAttempts)
      throw finalError(target, failure, attempts);
    const wait = failure.retryAfterMs ?? backoffMs(attempts, settings);
    if (wait > settings.maxBackoffMs)
      throw finalError(
        target,
        new AttemptFailure(
          failure.kind,
          `${failure.message}; the provider asked to wait ${Math.ceil(wait / 1000)} s, longer than the ` +
            `${Math.ceil(settings.maxBackoffMs / 1000)} s this adapter waits`,
        ),
        attempts,
      );
    const slept = performance.now();
    try {
      await settings.sleep(wait, signal);
    } catch (err) {
      if (signal?.aborted) throw abortedError(target, signal);
      throw err;
    }
    assertNotStalled(target, performance.now() - slept, wait, attempts);
  }
}

/** How much longer than its limit an attempt (or a backoff sleep) may take before the process counts as stalled. */
const STALL_GRACE_MS = 2_000;

/**
 * An attempt that took far longer than its own limit, or a backoff sleep that overslept, means this process
 * stood still (a pause, a stop-the-world, a swapped-out host): the message that drives the call has likely
 * gone to another replica meanwhile, which may have recorded an answer already. Asking again would ask a
 * recorded question, so the call ends with a retryable error and the driving message settles it.
 */
function assertNotStalled(target: CallTarget, tookMs: number, limitMs: number, attempts: number): void {
  if (tookMs <= limitMs + STALL_GRACE_MS) return;
  throw new DuraError(
    'model_call_stalled',
    `the ${target.provider} call for model "${target.model}" stood still: attempt ${attempts} or the wait after it took ${Math.round(tookMs)} ms of at most ${limitMs} ms, so this process was paused; it asks no more and the next delivery of the run's message settles the call`,
    { retryable: true },
  );
}
