import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import {
  ContractViolation,
  DuraError,
  formatIssues,
  STREAMS,
  SUBJECTS,
  ToolTaskSchema,
  type ToolTask,
} from '@dura/contracts';
import type { Db } from '@dura/db';
import { ensureStreams, DEFAULT_STREAM_OPTIONS, type StreamOptions } from '@dura/event-store';
import {
  duraMeter,
  duraTracer,
  ensureDurableConsumer,
  failpoint,
  withLogFields,
  RetryLater,
  startConsumerLoop,
  type ConsumerLoop,
  type Logger,
} from '@dura/service-kit';
import { retryDelayMs, type ToolDefinition, type ToolRegistry } from '@dura/tools';
import {
  DURA_ATTRS,
  DURA_METRICS,
  declareCounter,
  declareHistogram,
  traceparentOf,
  withSpan,
} from '@dura/telemetry';
import { trace } from '@opentelemetry/api';
import { createEffectLedger, type EffectLedger, type Finished } from './effect-ledger';
import { runTool } from './run-tool';
import { completedEvent, failedEvent } from './observations';
import { createRelay } from './relay';
import type { EffectRow } from './db/schema';

export interface GatewayDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  db: Db;
  tools: ToolRegistry;
  log: Logger;
  clock?: () => Date;
  concurrency?: number;
  /** Attempts per call before a retryable failure becomes final. */
  maxAttempts?: number;
  relayPollMs?: number;
  streams?: StreamOptions;
  /** How long a delivered task may go unacknowledged before another replica gets it (default 60 s). */
  ackWaitMs?: number;
  /** Added to a tool's timeout to form the lease after which a `started` call counts as orphaned (default 30 s). */
  leaseMarginMs?: number;
}

export const GATEWAY_CONSUMER = {
  stream: STREAMS.tasks,
  durable: 'tool-gateway',
  filterSubject: SUBJECTS.allToolTasks,
  maxDeliver: 20,
  ackWaitMs: 60_000,
} as const;

const DEFAULT_LEASE_MARGIN_MS = 30_000;

/**
 * The tool gateway: runs each tool call at most once per idempotency key (the effect ledger), and records
 * its outcome together with the observation to publish (the outbox). The relay then appends observations
 * to the run logs.
 */
export function createToolGateway(deps: GatewayDeps) {
  const clock = deps.clock ?? (() => new Date());
  const maxAttempts = deps.maxAttempts ?? 3;
  const ledger: EffectLedger = createEffectLedger(deps.db, clock);
  const tracer = duraTracer();
  const toolDuration = declareHistogram(duraMeter(), DURA_METRICS.toolCallDuration);
  const deduplicated = declareCounter(duraMeter(), DURA_METRICS.effectsDeduplicated);
  const retries = declareCounter(duraMeter(), DURA_METRICS.retries);
  const relay = createRelay({
    db: deps.db,
    js: deps.js,
    log: deps.log,
    ...(deps.relayPollMs ? { pollMs: deps.relayPollMs } : {}),
  });
  let loop: ConsumerLoop | undefined;
  const consumer = { ...GATEWAY_CONSUMER, ackWaitMs: deps.ackWaitMs ?? GATEWAY_CONSUMER.ackWaitMs };
  const leaseFor = (tool: ToolDefinition): number =>
    (tool.timeoutMs ?? 60_000) + (deps.leaseMarginMs ?? DEFAULT_LEASE_MARGIN_MS);

  async function execute(task: ToolTask, tool: ToolDefinition, attempt: number): Promise<void> {
    trace.getActiveSpan()?.setAttribute(DURA_ATTRS.attempt, attempt);
    const outcome = await runTool(tool, task, attempt);
    toolDuration.record(outcome.durationMs / 1000, {
      tool: task.tool,
      outcome: outcome.ok ? 'succeeded' : outcome.error.retryable ? 'retryable_error' : 'failed',
    });
    failpoint('gateway.after-effect');
    const now = clock();
    if (outcome.ok) {
      const finished = await ledger.finish(
        task.idempotencyKey,
        { status: 'succeeded', result: outcome.result },
        completedEvent(task, outcome.result, attempt, outcome.durationMs, now),
        outcome.durationMs,
      );
      failpoint('gateway.after-commit');
      await deliver(finished);
    } else {
      const policy = tool.retry ?? {};
      const error = { code: outcome.error.code, message: outcome.error.message };
      const retry =
        outcome.error.retryable &&
        (policy.retryOn?.(error) ?? true) &&
        attempt < (policy.attempts ?? maxAttempts);
      const failRun = !retry && policy.onExhausted === 'fail_run';
      await deliver(
        await ledger.finish(
          task.idempotencyKey,
          { status: retry ? 'retry' : 'failed', error },
          failedEvent(task, error, attempt, retry, now, failRun),
          outcome.durationMs,
        ),
      );
      if (retry) {
        retries.add(1, { operation: 'tool_call' });
        const delay = outcome.error.retryAfterMs ?? retryDelayMs(policy, attempt);
        throw new RetryLater(
          `${task.tool} attempt ${attempt} failed: ${error.message}; retrying in ${delay} ms`,
          delay,
        );
      }
    }
  }

  /** Publishes a just-recorded observation at once when nothing of its run is ahead of it; else the relay does. */
  async function deliver(finished: Finished): Promise<void> {
    if (finished.queued && !finished.ahead) await relay.sendNow(finished.queued);
    else relay.wake();
  }

  /** A `started` row whose lease ran out: a replica died mid-call. Ask the tool, re-run only when that is safe. */
  async function reconcile(task: ToolTask, tool: ToolDefinition, row: EffectRow): Promise<void> {
    const status = tool.status
      ? await tool.status(task.idempotencyKey, { signal: AbortSignal.timeout(30_000) })
      : { state: 'unknown' as const };
    const now = clock();
    if (status.state === 'succeeded') {
      await ledger.finish(
        task.idempotencyKey,
        { status: 'succeeded', result: status.result },
        completedEvent(task, status.result, row.attempts, 0, now),
        0,
      );
    } else if (status.state === 'failed') {
      await ledger.finish(
        task.idempotencyKey,
        { status: 'failed', error: status.error },
        failedEvent(task, status.error, row.attempts, false, now),
        0,
      );
    } else if (tool.safety === 'idempotent') {
      const attempt = await ledger.reclaim(task.idempotencyKey, leaseFor(tool));
      if (attempt === undefined)
        throw new DuraError(
          'effect_in_progress',
          `${task.idempotencyKey} was taken over by another replica`,
          { retryable: true },
        );
      deps.log.warn('re-running an interrupted idempotent call', { key: task.idempotencyKey, attempt });
      await execute(task, tool, attempt);
      return;
    } else {
      const error = {
        code: 'outcome_unknown',
        message: `${tool.name} is unsafe and attempt ${row.attempts} was interrupted; its outcome is unknown, so it was not run again`,
      };
      await ledger.finish(
        task.idempotencyKey,
        { status: 'failed', error },
        failedEvent(task, error, row.attempts, false, now),
        0,
      );
    }
    relay.wake();
  }

  async function handleTask(msg: JsMsg): Promise<void> {
    const received = parseTask(msg);
    await withLogFields({ runId: received.runId }, () =>
      withSpan(
        tracer,
        `dura.tool.call ${received.tool}`,
        {
          attributes: {
            [DURA_ATTRS.runId]: received.runId,
            [DURA_ATTRS.toolName]: received.tool,
            [DURA_ATTRS.toolCallId]: received.callId,
            [DURA_ATTRS.idempotencyKey]: received.idempotencyKey,
            'dura.run.step': received.step,
          },
        },
        // Observations carry this span's context, so the decision they lead to hangs under this call.
        (span) => {
          const trace = traceparentOf(span) ?? received.trace;
          return handleCall(trace ? { ...received, trace } : received);
        },
      ),
    );
  }

  async function handleCall(task: ToolTask): Promise<void> {
    const tool = deps.tools.get(task.tool);
    if (!tool) {
      const error = {
        code: 'unknown_tool',
        message: `this gateway has no tool "${task.tool}"; known tools: ${deps.tools.names().join(', ')}`,
      };
      await ledger.enqueue(failedEvent(task, error, 1, false, clock()), false);
      relay.wake();
      return;
    }
    const claim = await ledger.claim(task, leaseFor(tool));
    trace.getActiveSpan()?.setAttribute(DURA_ATTRS.deduped, claim.kind === 'finished');
    switch (claim.kind) {
      case 'claimed':
        return execute(task, tool, claim.attempt);
      case 'finished':
        deduplicated.add(1, { tool: task.tool });
        trace.getActiveSpan()?.setAttribute(DURA_ATTRS.attempt, claim.row.attempts);
        // A repeat: the recorded outcome stands; make sure its observation reaches the log.
        await ledger.enqueue(recordedObservation(task, claim.row, clock()), true);
        relay.wake();
        return;
      case 'orphaned':
        return reconcile(task, tool, claim.row);
      case 'busy':
        throw new DuraError(
          'effect_in_progress',
          `${task.idempotencyKey} is being executed by another worker`,
          { retryable: true },
        );
    }
  }

  return {
    relay,
    async start(): Promise<void> {
      await ensureStreams(deps.jsm, deps.streams ?? DEFAULT_STREAM_OPTIONS);
      await ensureDurableConsumer(deps.jsm, consumer);
      relay.start();
      loop = startConsumerLoop({
        js: deps.js,
        spec: consumer,
        source: 'tool-tasks',
        concurrency: deps.concurrency ?? 32,
        log: deps.log,
        handle: handleTask,
      });
      deps.log.info('tool gateway started', { tools: deps.tools.names() });
    },
    async stop(): Promise<void> {
      await loop?.stop();
      await relay.stop();
    },
  };
}

export type ToolGateway = ReturnType<typeof createToolGateway>;

function parseTask(msg: JsMsg): ToolTask {
  let body: unknown;
  try {
    body = JSON.parse(msg.string());
  } catch (err) {
    throw new ContractViolation(`tool task is not JSON: ${(err as Error).message}`);
  }
  const parsed = ToolTaskSchema.safeParse(body);
  if (!parsed.success)
    throw new ContractViolation('tool task does not match its schema', formatIssues(parsed.error));
  return parsed.data;
}

function recordedObservation(task: ToolTask, row: EffectRow, now: Date) {
  if (row.status === 'succeeded')
    return completedEvent(task, row.result as never, row.attempts, row.durationMs ?? 0, now);
  return failedEvent(task, row.error as { code: string; message: string }, row.attempts, false, now);
}
