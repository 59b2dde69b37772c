import type { ToolTask } from '@dura/contracts';
import { failpoint, RetryLater } from '@dura/service-kit';
import { retryDelayMs, type ToolDefinition } from '@dura/tools';
import { DURA_ATTRS } from '@dura/telemetry';
import { trace } from '@opentelemetry/api';
import type { CallRoute } from './call-route';
import { runUnlessCancelled, type Cancellations } from './cancellations';
import type { EffectLedger, Unclaimed } from './effect-ledger';
import type { GatewayMetrics } from './gateway-metrics';
import { assertLeaseHolds, fencedOut } from './lease-fence';
import { failedEvent } from './observations';
import type { ResultObservations } from './result-observations';
import type { ToolOutcome } from './run-tool';
import { secretFailure, type SecretCalls } from './secret-calls';

export interface AttemptParts {
  ledger: EffectLedger;
  observations: ResultObservations;
  secretCalls: SecretCalls;
  cancellations: Cancellations;
  clock: () => Date;
  /** Attempts of a tool without its own retry policy. */
  maxAttempts: number;
  leaseMarginMs: number;
  metrics: GatewayMetrics;
}

/** How an attempt holds its key: claimed (when, by `performance.now()`), or run without a claim. */
export type AttemptHold = { claimedAt?: number; unclaimed?: Unclaimed };

/**
 * One attempt of a call: the tool runs (secret arguments opened, unless its run was cancelled), and its
 * outcome and observation are recorded in one statement, then handed to the call's route. A retryable
 * failure within the tool's attempts throws `RetryLater` once recorded.
 */
export function createAttempts(parts: AttemptParts) {
  const { ledger, observations, secretCalls, clock } = parts;

  /**
   * Runs an attempt and records its outcome. Without a claim (`unclaimed`), false when the key turned out to
   * have a row already: nothing was recorded, and the caller goes the claimed way.
   */
  async function execute(
    task: ToolTask,
    tool: ToolDefinition,
    attempt: number,
    route: CallRoute,
    hold: AttemptHold = {},
  ): Promise<boolean> {
    trace.getActiveSpan()?.setAttribute(DURA_ATTRS.attempt, attempt);
    const { claimedAt } = hold;
    // Checked when nothing is left to wait on before the effect: the cancellation read before it waits on
    // NATS, for seconds while the server restarts, and the lease may run out meanwhile.
    const beforeStart =
      claimedAt === undefined
        ? undefined
        : () => assertLeaseHolds(task.idempotencyKey, claimedAt, parts.leaseMarginMs);
    const outcome = await runOpened(task, tool, attempt, route.readCancellation, beforeStart);
    if (outcome.ok || outcome.error.cancelled !== 'before_start')
      parts.metrics.toolDuration.record(outcome.durationMs / 1000, {
        tool: task.tool,
        outcome: outcome.ok ? 'succeeded' : outcome.error.retryable ? 'retryable_error' : 'failed',
      });
    failpoint('gateway.after-effect');
    const now = clock();
    if (outcome.ok) {
      const observation = await observations.completed(
        task,
        outcome.result,
        attempt,
        outcome.durationMs,
        now,
      );
      const record = () =>
        ledger.finish(
          task.idempotencyKey,
          { status: 'succeeded', result: outcome.result },
          observation,
          outcome.durationMs,
          hold.unclaimed ?? attempt,
        );
      // A read-only call run without a claim keeps its result in the log alone where its route allows.
      if (hold.unclaimed && route.sendUnrecorded) return route.sendUnrecorded(observation, record);
      const finished = await record();
      if (finished.conflict) return false;
      if (finished.fenced) return fencedOut(task.idempotencyKey, attempt);
      failpoint('gateway.after-commit');
      await route.deliver(finished);
      return true;
    } else {
      const policy = tool.retry ?? {};
      const error = { code: outcome.error.code, message: outcome.error.message };
      const retry =
        outcome.error.retryable &&
        (policy.retryOn?.(error) ?? true) &&
        attempt < (policy.attempts ?? parts.maxAttempts);
      // A cancelled run ends as cancelled; its interrupted call must not turn that into a failure.
      const failRun = !retry && policy.onExhausted === 'fail_run' && !outcome.error.cancelled;
      const finished = await ledger.finish(
        task.idempotencyKey,
        { status: retry ? 'retry' : 'failed', error },
        failedEvent(task, error, attempt, retry, now, failRun),
        outcome.durationMs,
        hold.unclaimed ?? attempt,
      );
      if (finished.conflict) return false;
      if (finished.fenced) return fencedOut(task.idempotencyKey, attempt);
      await route.deliver(finished);
      if (retry) {
        parts.metrics.retries.add(1, { operation: 'tool_call' });
        const delay = outcome.error.retryAfterMs ?? retryDelayMs(policy, attempt);
        throw new RetryLater(
          `${task.tool} attempt ${attempt} failed: ${error.message}; retrying in ${delay} ms`,
          delay,
        );
      }
      return true;
    }
  }

  /**
   * Runs the tool with its secret arguments opened, and seals the secret fields of its result before it is
   * recorded; a secret that cannot be opened or sealed is a terminal failure of the call.
   */
  async function runOpened(
    task: ToolTask,
    tool: ToolDefinition,
    attempt: number,
    readCancellation: boolean,
    beforeStart: (() => void) | undefined,
  ): Promise<ToolOutcome> {
    let plain: ToolTask;
    try {
      plain = secretCalls.opened(task);
    } catch (err) {
      return { ok: false, error: secretFailure(err), durationMs: 0 };
    }
    const outcome = await runUnlessCancelled(
      parts.cancellations,
      tool,
      plain,
      attempt,
      observations.storeBytes,
      { read: readCancellation, ...(beforeStart ? { beforeStart } : {}) },
    );
    if (!outcome.ok) return outcome;
    try {
      return { ...outcome, result: secretCalls.sealedResult(task, outcome.result) };
    } catch (err) {
      return { ok: false, error: secretFailure(err), durationMs: outcome.durationMs };
    }
  }

  return { execute };
}

export type Attempts = ReturnType<typeof createAttempts>;
