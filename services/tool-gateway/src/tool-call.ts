import type { ToolTask } from '@dura/contracts';
import { duraTracer, withLogFields, RetryLater, type Logger } from '@dura/service-kit';
import { mayRunAgain, type ToolDefinition, type ToolRegistry } from '@dura/tools';
import { DURA_ATTRS, traceparentOf, withSpan } from '@dura/telemetry';
import { trace } from '@opentelemetry/api';
import type { Attempts } from './attempt';
import type { CallRoute } from './call-route';
import type { EffectRow } from './db/schema';
import type { EffectLedger, Finished } from './effect-ledger';
import type { GatewayMetrics } from './gateway-metrics';
import { failedEvent } from './observations';
import type { Relay } from './relay';
import type { ResultObservations } from './result-observations';
import type { SecretCalls } from './secret-calls';
import type { HeldSlot, ToolSlots } from './tool-slots';

export interface ToolCallParts {
  tools: ToolRegistry;
  /** Lists a changing tool source again before a tool is declared unknown (see `GatewayDeps.refreshTools`). */
  refreshTools: ((tool: string) => Promise<void>) | undefined;
  /** Per-tool limits across replicas, over the tools' own `concurrency`. */
  toolConcurrency: Record<string, number> | undefined;
  slots: ToolSlots;
  throttleWaitMs: number;
  ledger: EffectLedger;
  relay: Relay;
  attempts: Attempts;
  observations: ResultObservations;
  secretCalls: SecretCalls;
  /** The lease after which a `started` attempt of `tool` counts as orphaned. */
  leaseFor: (tool: ToolDefinition) => number;
  clock: () => Date;
  log: Logger;
  metrics: GatewayMetrics;
}

/**
 * One tool call from its arrival to its recorded outcome, whichever way it came (`CallRoute`): the tool is
 * found, a concurrency slot held, the key claimed in the ledger, and then the call is run, found finished
 * (its recorded observation queued again), reconciled after a crash, or waited for while another attempt
 * runs it.
 */
export function createToolCalls(parts: ToolCallParts) {
  const { tools, ledger, relay, attempts, observations, clock, log, metrics } = parts;
  const tracer = duraTracer();

  /**
   * One call, in its `dura.tool.call` span. `fresh`: nobody can have started it yet (a task's first
   * delivery, or a drive's own new intent).
   */
  async function run(received: ToolTask, route: CallRoute, fresh: boolean): Promise<void> {
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
          return observations
            .withArgs(trace ? { ...received, trace } : received)
            .then((task) => handleCall(task, route, fresh));
        },
      ),
    );
  }

  async function handleCall(task: ToolTask, route: CallRoute, fresh: boolean): Promise<void> {
    if (!tools.get(task.tool)) await parts.refreshTools?.(task.tool);
    const tool = tools.get(task.tool);
    if (!tool) {
      const error = {
        code: 'unknown_tool',
        message: `this gateway has no tool "${task.tool}"; known tools: ${tools.names().join(', ')}`,
      };
      await ledger.enqueue(failedEvent(task, error, 1, false, clock()), false);
      relay.wake();
      return;
    }
    const slot = await slotFor(task, tool);
    try {
      await claimAndRun(task, tool, route, fresh);
    } finally {
      await slot?.release();
    }
  }

  /**
   * A concurrency slot for a call of a limited tool, waiting up to `throttleWaitMs`; when none came free
   * the task goes back to the stream and comes again later (it is not lost, and no effect has started).
   */
  async function slotFor(task: ToolTask, tool: ToolDefinition): Promise<HeldSlot | undefined> {
    const limit = parts.toolConcurrency?.[tool.name] ?? tool.concurrency;
    if (limit === undefined) return undefined;
    const throttleWaitMs = parts.throttleWaitMs;
    const slot = await parts.slots.acquire(tool.name, limit, task.idempotencyKey, throttleWaitMs);
    if (slot) return slot;
    metrics.retries.add(1, { operation: 'tool_throttled' });
    // Requeued, not redelivered: a call may wait behind a busy tool for as long as it takes without being
    // dead-lettered for its deliveries. It already waited `throttleWaitMs`, so it goes back without a delay.
    throw new RetryLater(
      `${tool.name} is at its limit of ${limit} calls at once across the gateways; ${task.idempotencyKey} waited ${throttleWaitMs} ms and goes to the back of the queue`,
      0,
      { requeue: true },
    );
  }

  async function claimAndRun(
    task: ToolTask,
    tool: ToolDefinition,
    route: CallRoute,
    fresh: boolean,
  ): Promise<void> {
    // A read-only call changes nothing outside its result and may run again at any time, so on its first
    // try (the drive running it in place has just recorded its intent, or a tool task comes for the first
    // time) it needs no claim: it runs at once and its result goes in with its row. Should the key have a
    // row after all (another replica took the call over, or the task repeats a call that finished long
    // ago), that row's verdict stands and nothing of this run is recorded. A redelivered task is claimed.
    if (fresh && tool.safety === 'read_only') {
      trace.getActiveSpan()?.setAttribute(DURA_ATTRS.deduped, false);
      if (await attempts.execute(task, tool, 1, route, { unclaimed: { task, startedAt: clock() } })) return;
    }
    // A tool with a status check is settled by asking it after a crash, never by running it again: its claim
    // must survive a database crash too. Only a tool that may run again without one may lose its claim.
    const durable = !mayRunAgain(tool.safety) || tool.status !== undefined;
    const claimedAt = performance.now();
    const claim = await ledger.claim(task, parts.leaseFor(tool), { durable });
    trace.getActiveSpan()?.setAttribute(DURA_ATTRS.deduped, claim.kind === 'finished');
    switch (claim.kind) {
      case 'claimed':
        await attempts.execute(task, tool, claim.attempt, route, { claimedAt });
        return;
      case 'finished':
        metrics.deduplicated.add(1, { tool: task.tool });
        trace.getActiveSpan()?.setAttribute(DURA_ATTRS.attempt, claim.row.attempts);
        // A repeat: the recorded outcome stands; make sure its observation reaches the log.
        await ledger.enqueue(await observations.recorded(task, claim.row, clock()), true);
        relay.wake();
        return;
      case 'orphaned':
        return reconcile(task, tool, claim.row, route);
      case 'busy':
        // Another replica (or a worker's drive, in place) runs the call right now. That is no failure of this
        // message: it waits for that attempt's outcome, or for its lease to run out, and claims again, using
        // up none of its deliveries (the consumer keeps it in progress meanwhile).
        log.debug('call in progress elsewhere; waiting for its outcome', { key: task.idempotencyKey });
        await ledger.untilSettled(task.idempotencyKey);
        return claimAndRun(task, tool, route, false);
    }
  }

  /** A `started` row whose lease ran out: a replica died mid-call. Ask the tool, re-run only when that is safe. */
  async function reconcile(
    task: ToolTask,
    tool: ToolDefinition,
    row: EffectRow,
    route: CallRoute,
  ): Promise<void> {
    const status = tool.status
      ? await tool.status(task.idempotencyKey, { signal: AbortSignal.timeout(30_000) })
      : { state: 'unknown' as const };
    const now = clock();
    let finished: Finished;
    if (status.state === 'succeeded') {
      const result = parts.secretCalls.sealedResult(task, status.result);
      finished = await ledger.finish(
        task.idempotencyKey,
        { status: 'succeeded', result },
        await observations.completed(task, result, row.attempts, 0, now),
        0,
        row.attempts,
      );
    } else if (status.state === 'failed') {
      finished = await ledger.finish(
        task.idempotencyKey,
        { status: 'failed', error: status.error },
        failedEvent(task, status.error, row.attempts, false, now),
        0,
        row.attempts,
      );
    } else if (mayRunAgain(tool.safety)) {
      const claimedAt = performance.now();
      const attempt = await ledger.reclaim(task.idempotencyKey, parts.leaseFor(tool));
      // Another replica took the attempt over first (or finished it): its verdict is waited for.
      if (attempt === undefined) return claimAndRun(task, tool, route, false);
      log.warn('re-running an interrupted idempotent call', { key: task.idempotencyKey, attempt });
      await attempts.execute(task, tool, attempt, route, { claimedAt });
      return;
    } else {
      const error = {
        code: 'outcome_unknown',
        message: `${tool.name} is unsafe and attempt ${row.attempts} was interrupted; its outcome is unknown, so it was not run again`,
      };
      finished = await ledger.finish(
        task.idempotencyKey,
        { status: 'failed', error },
        failedEvent(task, error, row.attempts, false, now),
        0,
        row.attempts,
      );
    }
    await route.deliver(finished);
  }

  return { run };
}

export type ToolCalls = ReturnType<typeof createToolCalls>;
