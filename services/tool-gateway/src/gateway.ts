import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { STREAMS, SUBJECTS, runIdInJson, type ToolTask } from '@dura/contracts';
import type { Db } from '@dura/db';
import { createPayloadStore, DEFAULT_PAYLOAD_THRESHOLD_BYTES } from '@dura/payloads';
import { connectionOf, DEFAULT_STREAM_OPTIONS, type StreamOptions } from '@dura/event-store';
import {
  ensureDurableConsumer,
  ensureStreamsOnStart,
  startConsumerLoop,
  type ConsumerLoop,
  type Logger,
  type StartWaitOptions,
} from '@dura/service-kit';
import type { SecretsBox, ToolDefinition, ToolRegistry } from '@dura/tools';
import { createAttempts } from './attempt';
import { taskRoute } from './call-route';
import { createCancellations } from './cancellations';
import { flushOutbox, releaseLeases } from './drain';
import { createEffectLedger } from './effect-ledger';
import { serveDirectCalls, type DirectCallDoor } from './direct-calls';
import { createGatewayMetrics } from './gateway-metrics';
import { createInPlaceCalls } from './in-place-calls';
import { createRelay } from './relay';
import { createResultObservations } from './result-observations';
import { createSecretCalls } from './secret-calls';
import { createTimers } from './timers';
import { createToolCalls } from './tool-call';
import { createToolSlots } from './tool-slots';
import { parseTask } from './tool-task';

export type { LocalCallOutcome } from './in-place-calls';

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
  /**
   * Answers planners' direct calls (`dura.call.<tool>`, see `serveDirectCalls`); on by default. A worker's
   * gateway, whose planner runs its calls in place, takes none.
   */
  directCalls?: boolean;
}

export const GATEWAY_CONSUMER = {
  stream: STREAMS.tasks,
  durable: 'tool-gateway',
  filterSubject: SUBJECTS.allToolTasks,
  maxDeliver: 20,
  ackWaitMs: 60_000,
} as const;

const DEFAULT_LEASE_MARGIN_MS = 30_000;

/** Attempts per call of a tool without its own retry policy, unless `maxAttempts` says otherwise. */
export const DEFAULT_GATEWAY_ATTEMPTS = 3;

/**
 * The tool gateway: runs each tool call at most once per idempotency key (the effect ledger), and records
 * its outcome together with the observation to publish (the outbox). The relay then appends observations
 * to the run logs. Calls come as tool tasks, or in place from a planner in the same process (`local`).
 * This function only wires the parts: a call's way is `createToolCalls`, an attempt `createAttempts`.
 */
export function createToolGateway(deps: GatewayDeps) {
  const clock = deps.clock ?? (() => new Date());
  const replicas = (deps.streams ?? DEFAULT_STREAM_OPTIONS).replicas;
  const leaseMarginMs = deps.leaseMarginMs ?? DEFAULT_LEASE_MARGIN_MS;
  const metrics = createGatewayMetrics();
  const relay = createRelay({
    db: deps.db,
    js: deps.js,
    log: deps.log,
    ...(deps.relayPollMs ? { pollMs: deps.relayPollMs } : {}),
  });
  // Rows the relay published at once are in the log, not ahead of a new row; their marks ride on its commit.
  const ledger = createEffectLedger(deps.db, clock, {
    inLog: () => relay.marks.publishedUnmarked(),
    marks: relay.marks,
  });
  const cancellations = createCancellations({ js: deps.js, log: deps.log, replicas });
  const timers = createTimers({
    js: deps.js,
    jsm: deps.jsm,
    db: deps.db,
    log: deps.log,
    clock,
    ...(deps.timerPollMs ? { pollMs: deps.timerPollMs } : {}),
    onFired: () => relay.wake(),
  });
  const observations = createResultObservations(
    createPayloadStore({ js: deps.js, replicas }),
    deps.payloadThresholdBytes ?? DEFAULT_PAYLOAD_THRESHOLD_BYTES,
  );
  const secretCalls = createSecretCalls(deps.tools, deps.secrets);
  const attempts = createAttempts({
    ledger,
    observations,
    secretCalls,
    cancellations,
    clock,
    maxAttempts: deps.maxAttempts ?? DEFAULT_GATEWAY_ATTEMPTS,
    leaseMarginMs,
    metrics,
  });
  const calls = createToolCalls({
    tools: deps.tools,
    refreshTools: deps.refreshTools,
    toolConcurrency: deps.toolConcurrency,
    slots: createToolSlots({
      db: deps.db,
      log: deps.log,
      ...(deps.slotLeaseMs ? { leaseMs: deps.slotLeaseMs } : {}),
    }),
    throttleWaitMs: deps.throttleWaitMs ?? 20_000,
    ledger,
    relay,
    attempts,
    observations,
    secretCalls,
    leaseFor: (tool: ToolDefinition) => (tool.timeoutMs ?? 60_000) + leaseMarginMs,
    clock,
    log: deps.log,
    metrics,
  });
  const local = createInPlaceCalls({
    tools: deps.tools,
    toolConcurrency: deps.toolConcurrency,
    relay,
    calls,
    js: deps.js,
    log: deps.log,
  });
  const fromTasks = taskRoute(relay);
  const handleTask = async (msg: JsMsg): Promise<void> =>
    calls.run(parseTask(msg), fromTasks, msg.info.deliveryCount === 1);

  let loop: ConsumerLoop | undefined;
  let door: DirectCallDoor | undefined;
  const consumer = { ...GATEWAY_CONSUMER, ackWaitMs: deps.ackWaitMs ?? GATEWAY_CONSUMER.ackWaitMs };

  function openDirectCalls(): DirectCallDoor | undefined {
    if (deps.directCalls === false) return undefined;
    const nc = connectionOf(deps.js);
    if (!nc) {
      deps.log.warn('direct calls not taken here: no NATS connection to answer them on');
      return undefined;
    }
    // Declined past this: the planner then sends a tool task, which waits in the stream for a free hand.
    const maxInFlight = (deps.concurrency ?? 32) * 4;
    return serveDirectCalls({ nc, local, log: deps.log, maxInFlight });
  }

  return {
    relay,
    timers,
    local,
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
      door = openDirectCalls();
      await door?.ready;
      deps.log.info('tool gateway started', { tools: deps.tools.names(), directCalls: door !== undefined });
    },
    /**
     * Stops taking tool tasks. With `drain` (a stop signal): running calls get until `drain.deadline` to
     * finish, the rest go back to the stream for another replica, and the outbox is flushed until
     * `drain.flushBy`.
     */
    async stop(drain?: { deadline: number; flushBy?: number }): Promise<void> {
      // Both drain at once, each until the deadline: direct calls and tool tasks.
      const [direct, report] = await Promise.all([door?.stop(drain), loop?.stop(drain)]);
      await timers.stop(drain);
      await cancellations.stop();
      await relay.stop();
      if (!drain) return;
      const handedBack = [...(direct ?? []), ...(report?.handedBack ?? []).flatMap(taskOf)];
      if (handedBack.length > 0)
        await releaseLeases({ db: deps.db, tools: deps.tools, clock, log: deps.log }, handedBack);
      await flushOutbox(relay, deps.log, drain.flushBy ?? drain.deadline);
    },
  };
}

export type ToolGateway = ReturnType<typeof createToolGateway>;

/** The task a handed-back message carries, or none when it is not one (it is dead-lettered, not re-run). */
function taskOf(msg: JsMsg): ToolTask[] {
  try {
    return [parseTask(msg)];
  } catch {
    return [];
  }
}
