import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import {
  ContractViolation,
  STREAMS,
  SUBJECTS,
  toolTaskSubject,
  ToolTaskSchema,
  type JsonValue,
  type NewEvent,
  type RunEvent,
  type ToolTask,
  decodeOrThrow,
  TASK_DECODE,
  runIdInJson,
} from '@dura/contracts';
import type { Db } from '@dura/db';
import { createPayloadStore, DEFAULT_PAYLOAD_THRESHOLD_BYTES, offloadIfLarge } from '@dura/payloads';
import { decodeStored, DEFAULT_STREAM_OPTIONS, type SentEvent, type StreamOptions } from '@dura/event-store';
import {
  duraMeter,
  duraTracer,
  ensureDurableConsumer,
  ensureStreamsOnStart,
  failpoint,
  withLogFields,
  RetryLater,
  startConsumerLoop,
  type ConsumerLoop,
  type Logger,
  type StartWaitOptions,
} from '@dura/service-kit';
import {
  mayRunAgain,
  retryDelayMs,
  type SecretsBox,
  type ToolDefinition,
  type ToolRegistry,
} from '@dura/tools';
import {
  DURA_ATTRS,
  DURA_METRICS,
  declareCounter,
  declareHistogram,
  traceparentOf,
  withSpan,
} from '@dura/telemetry';
import { trace } from '@opentelemetry/api';
import { and, eq, inArray } from 'drizzle-orm';
import { createEffectLedger, type EffectLedger, type Finished, type Unclaimed } from './effect-ledger';
import { createCancellations, runUnlessCancelled } from './cancellations';
import { completedEvent, failedEvent } from './observations';
import { createRelay, type Relay } from './relay';
import { createTimers } from './timers';
import { effects, type EffectRow } from './db/schema';
import { createSecretCalls, secretFailure } from './secret-calls';
import type { ToolOutcome } from './run-tool';
import { createToolSlots, type HeldSlot } from './tool-slots';
import { assertLeaseHolds, fencedOut } from './lease-fence';

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
  /** Set by a service's main: start waits (not ready) while a JetStream cluster cannot place the streams yet. */
  startWait?: StartWaitOptions;
  /** How long a delivered task may go unacknowledged before another replica gets it (default 60 s). */
  ackWaitMs?: number;
  /** Added to a tool's timeout to form the lease after which a `started` call counts as orphaned (default 30 s). */
  leaseMarginMs?: number;
  /** Longest sleep of the timer firing loop; a new timer wakes it at once (default 5 s). */
  timerPollMs?: number;
  /** Results whose JSON is larger than this go to the object store; the event keeps a reference (64 KiB). */
  payloadThresholdBytes?: number;
  /** Opens secret argument fields for the tool and seals secret result fields (see `ToolDefinition.secrets`). */
  secrets?: SecretsBox;
  /** Per-tool limits on calls at once across all replicas; they win over a tool's own `concurrency`. */
  toolConcurrency?: Record<string, number>;
  /** Lease of a held concurrency slot, renewed while the call runs (default 15 s). */
  slotLeaseMs?: number;
  /** How long a call over its tool's limit waits for a slot before its task is redelivered later (default 20 s). */
  throttleWaitMs?: number;
  /**
   * Asked once before a task's tool is declared unknown: a tool source whose list changes at run time (an MCP
   * server) lists its tools again, in case the planner saw the new tool first.
   */
  refreshTools?: (tool: string) => Promise<void>;
}

export const GATEWAY_CONSUMER = {
  stream: STREAMS.tasks,
  durable: 'tool-gateway',
  filterSubject: SUBJECTS.allToolTasks,
  maxDeliver: 20,
  ackWaitMs: 60_000,
} as const;

const DEFAULT_LEASE_MARGIN_MS = 30_000;
const UTF8 = new TextEncoder();

/**
 * What a call run in place (`runLocal`, inside the planner's drive of its run) left for that drive. The
 * drive folds the observation and goes on; when the relay publishes it instead, the relay's decide task
 * drives the run on.
 */
export interface LocalCallOutcome {
  /** The observation's sequence in its run's log, when this process published it; unset: the relay does. */
  seq?: number;
  /** The observation as stored, when it landed right behind the sequence the caller gave (`after`). */
  event?: RunEvent;
  /** The attempt failed and the call is to be retried after this many ms (its observation says so). */
  retryAfterMs?: number;
  /**
   * With `speculate`: the observation is on its way to the log, not yet acknowledged (`seq` and `event` stay
   * unset). `as(seq)` is the event as the log stores it at `seq`; `landed` settles with its sequence (and the
   * event, when it landed right behind `after`), or undefined when the relay publishes it instead.
   */
  sent?: SentEvent;
}

/** A call run in place, on its way down: the run's last sequence as the drive knows it, and what it left. */
interface LocalCall {
  after?: number;
  /** The drive running the call recorded its intent itself, a moment ago: no other attempt can have begun. */
  fresh?: boolean;
  /** Hand the observation back as soon as it is sent, before its ack (`LocalCallOutcome.sent`). */
  speculate?: boolean;
  outcome: LocalCallOutcome;
}

/** Attempts of a tool without its own retry policy, unless `maxAttempts` says otherwise. */
export const DEFAULT_GATEWAY_ATTEMPTS = 3;

/**
 * The tool gateway: runs each tool call at most once per idempotency key (the effect ledger), and records
 * its outcome together with the observation to publish (the outbox). The relay then appends observations
 * to the run logs.
 */
export function createToolGateway(deps: GatewayDeps) {
  const clock = deps.clock ?? (() => new Date());
  const maxAttempts = deps.maxAttempts ?? DEFAULT_GATEWAY_ATTEMPTS;
  // Rows the relay published at once are in the log, not ahead of a new row (see `inLog`).
  const ledger: EffectLedger = createEffectLedger(deps.db, clock, {
    inLog: () => relay.publishedUnmarked(),
    marks: { take: () => relay.takeMarks(), written: (ids, ok) => relay.marksWritten(ids, ok) },
  });
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
  const cancellations = createCancellations({
    js: deps.js,
    log: deps.log,
    replicas: (deps.streams ?? DEFAULT_STREAM_OPTIONS).replicas,
  });
  const timers = createTimers({
    js: deps.js,
    jsm: deps.jsm,
    db: deps.db,
    log: deps.log,
    clock,
    ...(deps.timerPollMs ? { pollMs: deps.timerPollMs } : {}),
    onFired: () => relay.wake(),
  });
  const payloads = createPayloadStore({
    js: deps.js,
    replicas: (deps.streams ?? DEFAULT_STREAM_OPTIONS).replicas,
  });
  const payloadThreshold = deps.payloadThresholdBytes ?? DEFAULT_PAYLOAD_THRESHOLD_BYTES;
  const secretCalls = createSecretCalls(deps.tools, deps.secrets);
  const slots = createToolSlots({
    db: deps.db,
    log: deps.log,
    ...(deps.slotLeaseMs ? { leaseMs: deps.slotLeaseMs } : {}),
  });
  const throttleWaitMs = deps.throttleWaitMs ?? 20_000;

  /**
   * The observation of a result: inline, or, over the threshold, a reference to the object store. The
   * object is content-addressed, so every path that builds this observation (a repeat, a reconcile) agrees.
   */
  async function completed(
    task: ToolTask,
    result: JsonValue,
    attempt: number,
    durationMs: number,
    now: Date,
  ) {
    const offloaded = await offloadIfLarge(result, payloadThreshold, (bytes) => payloads.put(bytes));
    return 'ref' in offloaded
      ? completedEvent(task, null, attempt, durationMs, now, offloaded.ref)
      : completedEvent(task, result, attempt, durationMs, now);
  }

  /** Oversized arguments travel as a reference; fetched (hash-checked) before the tool sees them. */
  async function withArgs(task: ToolTask): Promise<ToolTask> {
    if (!task.argsRef) return task;
    const args = await payloads.getJson(task.argsRef);
    if (args === null || typeof args !== 'object' || Array.isArray(args))
      throw new ContractViolation(`the arguments stored at ${task.argsRef.uri} are not a JSON object`);
    return { ...task, args };
  }

  async function recordedObservation(task: ToolTask, row: EffectRow, now: Date) {
    if (row.status === 'succeeded')
      return completed(task, row.result as JsonValue, row.attempts, row.durationMs ?? 0, now);
    return failedEvent(task, row.error as { code: string; message: string }, row.attempts, false, now);
  }

  let loop: ConsumerLoop | undefined;
  const consumer = { ...GATEWAY_CONSUMER, ackWaitMs: deps.ackWaitMs ?? GATEWAY_CONSUMER.ackWaitMs };
  const leaseFor = (tool: ToolDefinition): number =>
    (tool.timeoutMs ?? 60_000) + (deps.leaseMarginMs ?? DEFAULT_LEASE_MARGIN_MS);

  /**
   * Runs an attempt and records its outcome. Without a claim (`unclaimed`), false when the key turned out to
   * have a row already: nothing was recorded, and the caller goes the claimed way.
   */
  async function execute(
    task: ToolTask,
    tool: ToolDefinition,
    attempt: number,
    local?: LocalCall,
    unclaimed?: Unclaimed,
    claimedAt?: number,
  ): Promise<boolean> {
    trace.getActiveSpan()?.setAttribute(DURA_ATTRS.attempt, attempt);
    if (claimedAt !== undefined)
      assertLeaseHolds(task.idempotencyKey, claimedAt, deps.leaseMarginMs ?? DEFAULT_LEASE_MARGIN_MS);
    // A call run in place comes from a drive that has just folded its run's log through the intent and
    // found no cancellation in it; one recorded after that reaches the call through the watcher, which aborts it.
    const outcome = await runOpened(task, tool, attempt, local === undefined);
    if (outcome.ok || outcome.error.cancelled !== 'before_start')
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
        await completed(task, outcome.result, attempt, outcome.durationMs, now),
        outcome.durationMs,
        unclaimed ?? attempt,
      );
      if (finished.conflict) return false;
      if (finished.fenced) return fencedOut(task.idempotencyKey, attempt);
      failpoint('gateway.after-commit');
      await deliver(finished, local);
      return true;
    } else {
      const policy = tool.retry ?? {};
      const error = { code: outcome.error.code, message: outcome.error.message };
      const retry =
        outcome.error.retryable &&
        (policy.retryOn?.(error) ?? true) &&
        attempt < (policy.attempts ?? maxAttempts);
      // A cancelled run ends as cancelled; its interrupted call must not turn that into a failure.
      const failRun = !retry && policy.onExhausted === 'fail_run' && !outcome.error.cancelled;
      const finished = await ledger.finish(
        task.idempotencyKey,
        { status: retry ? 'retry' : 'failed', error },
        failedEvent(task, error, attempt, retry, now, failRun),
        outcome.durationMs,
        unclaimed ?? attempt,
      );
      if (finished.conflict) return false;
      if (finished.fenced) return fencedOut(task.idempotencyKey, attempt);
      await deliver(finished, local);
      if (retry) {
        retries.add(1, { operation: 'tool_call' });
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
  ): Promise<ToolOutcome> {
    let plain: ToolTask;
    try {
      plain = secretCalls.opened(task);
    } catch (err) {
      return { ok: false, error: secretFailure(err), durationMs: 0 };
    }
    const outcome = await runUnlessCancelled(
      cancellations,
      tool,
      plain,
      attempt,
      (bytes) => payloads.put(bytes),
      { read: readCancellation },
    );
    if (!outcome.ok) return outcome;
    try {
      return { ...outcome, result: secretCalls.sealedResult(task, outcome.result) };
    } catch (err) {
      return { ok: false, error: secretFailure(err), durationMs: outcome.durationMs };
    }
  }

  /**
   * Publishes a just-recorded observation at once when nothing of its run is ahead of it; else the relay
   * does. A call run in place gets the observation's sequence instead of a decide task.
   */
  async function deliver(finished: Finished, local?: LocalCall): Promise<void> {
    if (!finished.queued || finished.ahead) {
      // A pass leaves a run alone while a row of it is published but not marked: mark those now.
      void relay.flushMarks().finally(() => relay.wake());
      return;
    }
    const queued = finished.queued;
    const send = () =>
      relay.sendNow(queued, {
        nudge: local === undefined,
        ...(local?.after === undefined ? {} : { after: local.after }),
      });
    if (local?.speculate) {
      local.outcome.sent = sendSoon(queued.payload, send);
      return;
    }
    const sent = await send();
    if (!local || !sent) return;
    local.outcome.seq = sent.seq;
    if (sent.followed) local.outcome.event = decodeStored({ seq: sent.seq, data: sent.followed });
  }

  /**
   * An observation handed back before it is published: `send()` publishes it, and so does the next turn of
   * the event loop when nobody did by then, so a slow model never holds it back. A drive that has its next
   * turn ready at once sends both in one socket write.
   */
  function sendSoon(
    payload: NewEvent,
    publish: () => Promise<{ seq: number; followed?: Uint8Array } | undefined>,
  ): SentEvent {
    let landed: Promise<{ seq: number; followed: boolean } | undefined> | undefined;
    let bytes: Uint8Array | undefined;
    const send = () =>
      (landed ??= publish().then(
        (sent) => sent && { seq: sent.seq, followed: sent.followed !== undefined },
        () => undefined,
      ));
    const soon = setImmediate(() => void send());
    return {
      id: payload.meta.id,
      as: (seq) => decodeStored({ seq, data: (bytes ??= UTF8.encode(JSON.stringify(payload))) }),
      send: () => {
        clearImmediate(soon);
        void send();
      },
      landed: () => {
        clearImmediate(soon);
        return send();
      },
    };
  }

  /** A `started` row whose lease ran out: a replica died mid-call. Ask the tool, re-run only when that is safe. */
  async function reconcile(
    task: ToolTask,
    tool: ToolDefinition,
    row: EffectRow,
    local?: LocalCall,
  ): Promise<void> {
    const status = tool.status
      ? await tool.status(task.idempotencyKey, { signal: AbortSignal.timeout(30_000) })
      : { state: 'unknown' as const };
    const now = clock();
    let finished: Finished;
    if (status.state === 'succeeded') {
      const result = secretCalls.sealedResult(task, status.result);
      finished = await ledger.finish(
        task.idempotencyKey,
        { status: 'succeeded', result },
        await completed(task, result, row.attempts, 0, now),
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
      const attempt = await ledger.reclaim(task.idempotencyKey, leaseFor(tool));
      // Another replica took the attempt over first (or finished it): its verdict is waited for.
      if (attempt === undefined) return claimAndRun(task, tool, local, false);
      deps.log.warn('re-running an interrupted idempotent call', { key: task.idempotencyKey, attempt });
      await execute(task, tool, attempt, local, undefined, claimedAt);
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
    await deliver(finished, local);
  }

  async function handleTask(msg: JsMsg): Promise<void> {
    await callInSpan(parseTask(msg), undefined, msg.info.deliveryCount === 1);
  }

  /**
   * One call, in its `dura.tool.call` span: from a tool task, or in place (`local`) from a drive. `fresh`:
   * nobody can have started it yet (a task's first delivery, or a drive's own new intent).
   */
  async function callInSpan(
    received: ToolTask,
    local?: LocalCall,
    fresh = local?.fresh === true,
  ): Promise<void> {
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
          return withArgs(trace ? { ...received, trace } : received).then((task) =>
            handleCall(task, local, fresh),
          );
        },
      ),
    );
  }

  async function handleCall(task: ToolTask, local: LocalCall | undefined, fresh: boolean): Promise<void> {
    if (!deps.tools.get(task.tool)) await deps.refreshTools?.(task.tool);
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
    const slot = await slotFor(task, tool);
    try {
      await claimAndRun(task, tool, local, fresh);
    } finally {
      await slot?.release();
    }
  }

  /**
   * A concurrency slot for a call of a limited tool, waiting up to `throttleWaitMs`; when none came free
   * the task goes back to the stream and comes again later (it is not lost, and no effect has started).
   */
  async function slotFor(task: ToolTask, tool: ToolDefinition): Promise<HeldSlot | undefined> {
    const limit = deps.toolConcurrency?.[tool.name] ?? tool.concurrency;
    if (limit === undefined) return undefined;
    const slot = await slots.acquire(tool.name, limit, task.idempotencyKey, throttleWaitMs);
    if (slot) return slot;
    retries.add(1, { operation: 'tool_throttled' });
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
    local: LocalCall | undefined,
    fresh: boolean,
  ): Promise<void> {
    // A read-only call changes nothing outside its result and may run again at any time, so on its first
    // try (the drive running it in place has just recorded its intent, or a tool task comes for the first
    // time) it needs no claim: it runs at once and its result goes in with its row. Should the key have a
    // row after all (another replica took the call over, or the task repeats a call that finished long
    // ago), that row's verdict stands and nothing of this run is recorded. A redelivered task is claimed.
    if (fresh && tool.safety === 'read_only') {
      trace.getActiveSpan()?.setAttribute(DURA_ATTRS.deduped, false);
      if (await execute(task, tool, 1, local, { task, startedAt: clock() })) return;
    }
    // A tool with a status check is settled by asking it after a crash, never by running it again: its claim
    // must survive a database crash too. Only a tool that may run again without one may lose its claim.
    const durable = !mayRunAgain(tool.safety) || tool.status !== undefined;
    const claimedAt = performance.now();
    const claim = await ledger.claim(task, leaseFor(tool), { durable });
    trace.getActiveSpan()?.setAttribute(DURA_ATTRS.deduped, claim.kind === 'finished');
    switch (claim.kind) {
      case 'claimed':
        await execute(task, tool, claim.attempt, local, undefined, claimedAt);
        return;
      case 'finished':
        deduplicated.add(1, { tool: task.tool });
        trace.getActiveSpan()?.setAttribute(DURA_ATTRS.attempt, claim.row.attempts);
        // A repeat: the recorded outcome stands; make sure its observation reaches the log.
        await ledger.enqueue(await recordedObservation(task, claim.row, clock()), true);
        relay.wake();
        return;
      case 'orphaned':
        return reconcile(task, tool, claim.row, local);
      case 'busy':
        // Another replica (or a worker's drive, in place) runs the call right now. That is no failure of this
        // message: it waits for that attempt's outcome, or for its lease to run out, and claims again, using
        // up none of its deliveries (the consumer keeps it in progress meanwhile).
        deps.log.debug('call in progress elsewhere; waiting for its outcome', { key: task.idempotencyKey });
        await ledger.untilSettled(task.idempotencyKey);
        return claimAndRun(task, tool, local, false);
    }
  }

  /** Whether `runLocal` takes calls of this tool: one this gateway has, with no limit across replicas. */
  function runsLocally(toolName: string): boolean {
    const tool = deps.tools.get(toolName);
    return tool !== undefined && (deps.toolConcurrency?.[toolName] ?? tool.concurrency) === undefined;
  }

  /**
   * Runs a call in this process, as a tool task would (claim, effect, result and observation committed,
   * observation published), for a planner in the same process that drives the call's run: no tool task, no
   * decide task. The log holds the call's intent, so a crash here leaves what a crashed gateway leaves: the
   * driving message comes again and the ledger settles the call. A retryable failure is reported, not thrown.
   */
  async function runLocal(
    task: ToolTask,
    options: { after?: number; fresh?: boolean; speculate?: boolean } = {},
  ): Promise<LocalCallOutcome> {
    const local: LocalCall = {
      outcome: {},
      ...(options.after === undefined ? {} : { after: options.after }),
      ...(options.fresh ? { fresh: true } : {}),
      ...(options.speculate && options.after !== undefined ? { speculate: true } : {}),
    };
    try {
      await callInSpan(task, local);
    } catch (err) {
      if (!(err instanceof RetryLater) || err.requeue) throw err;
      local.outcome.retryAfterMs = err.delayMs;
    }
    return local.outcome;
  }

  return {
    relay,
    timers,
    local: { runs: runsLocally, run: runLocal, publishesWith: deps.js },
    async start(): Promise<void> {
      await ensureStreamsOnStart(deps.jsm, deps.streams ?? DEFAULT_STREAM_OPTIONS, deps.startWait);
      await ensureDurableConsumer(deps.jsm, consumer);
      await cancellations.start();
      relay.start();
      await timers.start();
      loop = startConsumerLoop({
        js: deps.js,
        spec: consumer,
        source: 'tool-tasks',
        concurrency: deps.concurrency ?? 32,
        log: deps.log,
        handle: handleTask,
        runIdOf: (msg) => runIdInJson(msg.data),
      });
      deps.log.info('tool gateway started', { tools: deps.tools.names() });
    },
    /**
     * Stops taking tool tasks. With `drain` (a stop signal): running calls get until `drain.deadline` to
     * finish, the rest go back to the stream for another replica, and the outbox is flushed until
     * `drain.flushBy`.
     */
    async stop(drain?: { deadline: number; flushBy?: number }): Promise<void> {
      const report = await loop?.stop(drain);
      await timers.stop(drain);
      await cancellations.stop();
      await relay.stop();
      if (!drain) return;
      if (report && report.handedBack.length > 0) await releaseLeases(report.handedBack);
      await flushOutbox(relay, deps.log, drain.flushBy ?? drain.deadline);
    },
  };

  /**
   * A call handed back at the drain deadline keeps its `started` row, and another replica would wait out
   * the lease before reconciling it. An idempotent tool may run again under the same key, so its lease ends
   * now; an unsafe one keeps its lease, which outlasts this process, so no second attempt overlaps it.
   */
  async function releaseLeases(handedBack: readonly JsMsg[]): Promise<void> {
    const keys = handedBack.flatMap((msg) => {
      try {
        const task = parseTask(msg);
        const tool = deps.tools.get(task.tool);
        return tool && mayRunAgain(tool.safety) ? [task.idempotencyKey] : [];
      } catch {
        return [];
      }
    });
    if (keys.length === 0) return;
    try {
      await deps.db
        .update(effects)
        .set({ leaseUntil: clock() })
        .where(and(inArray(effects.idempotencyKey, keys), eq(effects.status, 'started')));
      deps.log.info('released the leases of handed-back idempotent calls', { keys });
    } catch (err) {
      deps.log.warn('releasing the leases of handed-back calls failed; they are reconciled after the lease', {
        keys,
        err,
      });
    }
  }
}

/** Publishes what the outbox still holds (for runs no other relay holds) until it is empty or the deadline. */
async function flushOutbox(relay: Relay, log: Logger, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), Math.max(0, deadline - Date.now()));
  });
  try {
    for (;;) {
      const sent = await Promise.race([relay.relayOnce(), expired]);
      if (sent === 'expired') {
        log.warn('outbox not flushed by the drain deadline; another replica relays the rest');
        return;
      }
      if (sent === 0) return;
    }
  } catch (err) {
    log.warn('flushing the outbox failed; another replica relays the rest', { err });
  } finally {
    clearTimeout(timer);
  }
}

export type ToolGateway = ReturnType<typeof createToolGateway>;

function parseTask(msg: JsMsg): ToolTask {
  const parsed = { data: decodeOrThrow(msg.data, ToolTaskSchema, 'tool task', TASK_DECODE) };
  // Permissions are granted per subject: a task must not reach a tool other than the one its subject names.
  const expected = toolTaskSubject(parsed.data.tool);
  if (msg.subject !== expected)
    throw new ContractViolation(
      `tool task for ${parsed.data.tool} was published on ${msg.subject}; publish it on ${expected}`,
      [`tool: "${parsed.data.tool}" does not match the subject ${msg.subject}`],
    );
  return parsed.data;
}
