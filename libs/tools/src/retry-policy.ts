/** How the gateway retries a tool's retryable failures. Every attempt is recorded in the run's log. */
export interface RetryPolicy {
  /** Attempts in all, the first included (default: the gateway's GATEWAY_MAX_ATTEMPTS). */
  attempts?: number;
  /** Delay before the second attempt; it grows by `multiplier` per attempt up to `maxDelayMs` (defaults 500, 2, 30 s). */
  initialDelayMs?: number;
  multiplier?: number;
  maxDelayMs?: number;
  /** Which retryable errors to retry (default: every error the tool marked retryable). */
  retryOn?: (error: { code: string; message: string }) => boolean;
  /** When attempts run out: `observe` (default) shows the failure to the model; `fail_run` fails the run. */
  onExhausted?: 'observe' | 'fail_run';
}

/**
 * Exponential backoff with full jitter: a uniform delay in [0, min(max, initial * multiplier^(attempt-1))],
 * so replicas retrying the same dependency spread out instead of hitting it together.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(
    policy.maxDelayMs ?? 30_000,
    (policy.initialDelayMs ?? 500) * (policy.multiplier ?? 2) ** Math.max(0, attempt - 1),
  );
  return Math.round(random() * ceiling);
}
