import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import {
  DecideTaskSchema,
  runIdInJson,
  STREAMS,
  SUBJECTS,
  decodeOrThrow,
  TASK_DECODE,
} from '@dura/contracts';
import { createEventStore, type StreamOptions, DEFAULT_STREAM_OPTIONS } from '@dura/event-store';
import {
  ensureDurableConsumer,
  ensureStreamsOnStart,
  startConsumerLoop,
  withLogFields,
  type ConsumerLoop,
  type DrainOptions,
  type Logger,
  type StartWaitOptions,
} from '@dura/service-kit';
import type { SecretsBox, ToolRegistry } from '@dura/tools';
import { createCancellations } from './cancellations';
import { createParking } from './parking';
import { createRequestEraser } from './erase-request';
import { createIntake } from './intake';
import { redactRequest, redactRequestBytes } from './redact-request';
import { createSignalIntake, createSignalTrace } from './signal-intake';
import { createForkIntake, FORKS_DLQ_SOURCE } from './fork-intake';
import { redactForkEditBytes } from './fork-edit-policy';
import type { PlannerModel } from '@dura/agents';
import { createRunDriver, DEFAULT_SNAPSHOT_EVERY, type LocalTools } from './run-driver';
import { openSnapshotBucket } from './snapshot-store';
import { sealDecision, sealRequest } from './seal-request';
import { registeredSecrets } from './secret-inputs';
import { createFlowControl, wakeFor, type FlowControl } from './flow-control';
import { createFlowStore } from './flow-store';
import { startDeclaring } from './flow-declarations';
import { createRunFlow } from './run-flow';
import { createTenantAdmission } from './tenant-admission';
import type { TenantLimits } from './tenant-limits';
import { isTerminal, type ModelLimit } from '@dura/core';
import type { ToolAuthorization } from './tool-authorization';
import { createScheduler } from './scheduler';
import { createEventTriggers } from './event-triggers';

export interface PlannerDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  model: PlannerModel;
  tools: ToolRegistry;
  log: Logger;
  clock?: () => Date;
  concurrency?: number;
  streams?: StreamOptions;
  /** Set by a service's main: start waits (not ready) while a JetStream cluster cannot place the streams yet. */
  startWait?: StartWaitOptions;
  /** How long a delivered message may go unacknowledged before another replica gets it (default 60 s). */
  ackWaitMs?: number;
  /** Events a run grows by between snapshots (default 100). */
  snapshotEvery?: number;
  /** The key secret tool fields are sealed with; without it, a secret value in clear is refused. */
  secrets?: SecretsBox;
  /** Limits on runs in flight per tenant, across every replica; unset: no limits. */
  tenantLimits?: TenantLimits;
  /**
   * Who may start which agents, and whether requests may carry inline plans. Unset: everything allowed
   * (embedding, tests); the planner service always passes its configuration's, which defaults to closed.
   */
  authorization?: ToolAuthorization;
  /** A gateway in this process: calls of its tools run in place during a drive (see `RunDriverDeps`). */
  localTools?: LocalTools;
  /**
   * Model limits shared by every replica (`dura_flow`); concurrency keys of runs are enforced with or
   * without them. `leaseMs`: how long a concurrent call's slot outlives a holder killed mid-call.
   */
  flow?: { limits: readonly ModelLimit[]; leaseMs?: number; control?: FlowControl };
  /** Start the runs of schedules (`dura_schedules`); unset: this replica does not tick. */
  schedules?: { pollMs?: number };
  /** Start runs from event triggers (`dura_triggers`, stream DURA_EVENTS); unset: off on this replica. */
  eventTriggers?: { pollMs?: number; gatePollMs?: number };
}

export const PLANNER_CONSUMERS = {
  intake: {
    stream: STREAMS.requests,
    durable: 'planner-intake',
    filterSubject: SUBJECTS.submit,
    maxDeliver: 10,
    ackWaitMs: 60_000,
  },
  signals: {
    stream: STREAMS.requests,
    durable: 'planner-signals',
    filterSubject: SUBJECTS.signal,
    maxDeliver: 10,
    ackWaitMs: 60_000,
  },
  fork: {
    stream: STREAMS.requests,
    durable: 'planner-fork',
    filterSubject: SUBJECTS.fork,
    maxDeliver: 10,
    ackWaitMs: 60_000,
  },
  decide: {
    stream: STREAMS.tasks,
    durable: 'planner-decide',
    filterSubject: SUBJECTS.decideTask,
    maxDeliver: 10,
    ackWaitMs: 60_000,
  },
} as const;

/**
 * The planner: starts runs from `dura.submit` and moves them forward on every decide task. Stateless: any
 * replica can take any run, and a killed replica's messages are redelivered to another.
 */
export function createPlanner(deps: PlannerDeps) {
  const clock = deps.clock ?? (() => new Date());
  const store = createEventStore({ js: deps.js, jsm: deps.jsm });
  const serves = deps.model.serves?.bind(deps.model);
  const parking = serves
    ? createParking({ js: deps.js, serves, log: deps.log, replicas: deps.streams?.replicas ?? 1 })
    : undefined;
  const cancellations = createCancellations({ js: deps.js, replicas: deps.streams?.replicas ?? 1 });
  const registered = registeredSecrets(deps.model, deps.tools);
  const flow = createRunFlow({
    flow:
      deps.flow?.control ??
      createFlowControl({
        store: createFlowStore({ js: deps.js, log: deps.log, replicas: deps.streams?.replicas ?? 1 }),
        limits: deps.flow?.limits ?? [],
        wake: wakeFor(deps.js),
        ...(deps.flow?.leaseMs === undefined ? {} : { leaseMs: deps.flow.leaseMs }),
      }),
    model: deps.model,
    modelLimits: (deps.flow?.limits.length ?? 0) > 0,
  });
  const driver = createRunDriver({
    store,
    js: deps.js,
    model: deps.model,
    log: deps.log,
    clock,
    snapshots: { every: deps.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY, replicas: deps.streams?.replicas ?? 1 },
    cancellations,
    ...(parking ? { parking } : {}),
    sealDecision: (decision, scope) => sealDecision(decision, deps.tools, deps.secrets, scope, registered),
    ...(deps.localTools ? { localTools: deps.localTools } : {}),
    flow,
  });
  const eraseRequest = createRequestEraser({ jsm: deps.jsm, log: deps.log });
  const handleSubmit = createIntake({
    store,
    js: deps.js,
    driver,
    tools: deps.tools,
    log: deps.log,
    clock,
    model: deps.model,
    registered,
    ...(deps.authorization ? { authorization: deps.authorization } : {}),
    ...(deps.secrets ? { secrets: deps.secrets } : {}),
    erase: eraseRequest,
    ...(deps.tenantLimits
      ? {
          tenants: {
            limits: deps.tenantLimits,
            admission: createTenantAdmission({
              js: deps.js,
              jsm: deps.jsm,
              statusOf: async (runId) => (await driver.load(runId)).state.status,
              log: deps.log,
              replicas: deps.streams?.replicas ?? 1,
            }),
          },
        }
      : {}),
  });
  const loops: ConsumerLoop[] = [];
  let declaring: { stop(): void } | undefined;
  const ackWaitMs = deps.ackWaitMs ?? PLANNER_CONSUMERS.intake.ackWaitMs;
  const consumers = {
    intake: { ...PLANNER_CONSUMERS.intake, ackWaitMs },
    decide: { ...PLANNER_CONSUMERS.decide, ackWaitMs },
    signals: { ...PLANNER_CONSUMERS.signals, ackWaitMs },
    fork: { ...PLANNER_CONSUMERS.fork, ackWaitMs },
  };
  const handleSignal = createSignalIntake({ store, driver, log: deps.log, clock, cancellations });
  const handleFork = createForkIntake({
    store,
    js: deps.js,
    driver,
    log: deps.log,
    clock,
    maxDeliver: consumers.fork.maxDeliver,
    ...(deps.authorization ? { authorization: deps.authorization } : {}),
    model: deps.model,
    tools: deps.tools,
    registered,
    ...(deps.secrets ? { secrets: deps.secrets } : {}),
    erase: eraseRequest,
  });

  const scheduler = deps.schedules
    ? createScheduler({
        js: deps.js,
        log: deps.log,
        clock,
        runOf: async (runId) => {
          const { state } = await driver.load(runId);
          return {
            status: state.status,
            tenant: state.tenant,
            schedule: state.request?.metadata?.['dura.schedule'],
          };
        },
        replicas: deps.streams?.replicas ?? 1,
        ...(deps.schedules.pollMs === undefined ? {} : { pollMs: deps.schedules.pollMs }),
      })
    : undefined;
  const eventTriggers = deps.eventTriggers
    ? createEventTriggers({
        js: deps.js,
        jsm: deps.jsm,
        log: deps.log,
        ackWaitMs,
        replicas: deps.streams?.replicas ?? 1,
        duplicateWindowMs: (deps.streams ?? DEFAULT_STREAM_OPTIONS).duplicateWindowMs,
        secrets: {
          seal: (request) => sealRequest(request, deps.tools, deps.secrets, { registered }).request,
          redact: (body) => redactRequest(body, deps.tools, registered),
          erase: createRequestEraser({ jsm: deps.jsm, log: deps.log, stream: STREAMS.events }),
        },
        ...(deps.eventTriggers.pollMs === undefined ? {} : { pollMs: deps.eventTriggers.pollMs }),
        ...(deps.eventTriggers.gatePollMs === undefined ? {} : { gatePollMs: deps.eventTriggers.gatePollMs }),
        phaseOf: async (runId) => {
          const { state } = await driver.load(runId);
          if (state.status === 'none') return 'unseen';
          return isTerminal(state.status) ? 'ended' : 'in-flight';
        },
      })
    : undefined;

  async function handleDecide(data: Uint8Array): Promise<void> {
    const { runId, afterSeq, trace, reason } = decodeOrThrow(
      data,
      DecideTaskSchema,
      'decide task',
      TASK_DECODE,
    );
    // A wake names no event of the log: the drive reads the whole tail.
    const position = reason === 'capacity' ? { wake: true } : { afterSeq };
    await withLogFields({ runId }, () => driver.drive(runId, { ...position, ...(trace ? { trace } : {}) }));
  }

  return {
    driver,
    async start(): Promise<void> {
      await ensureStreamsOnStart(deps.jsm, deps.streams ?? DEFAULT_STREAM_OPTIONS, deps.startWait);
      await openSnapshotBucket(deps.js, { replicas: deps.streams?.replicas ?? 1 });
      await ensureDurableConsumer(deps.jsm, consumers.intake);
      await ensureDurableConsumer(deps.jsm, consumers.decide);
      await ensureDurableConsumer(deps.jsm, consumers.signals);
      await ensureDurableConsumer(deps.jsm, consumers.fork);
      await parking?.start();
      const concurrency = deps.concurrency ?? 16;
      loops.push(
        startConsumerLoop({
          js: deps.js,
          spec: consumers.intake,
          source: 'requests',
          concurrency,
          log: deps.log,
          handle: handleSubmit,
          // A request dead-lettered after its last delivery keeps no secret there, nor on `dura.submit`.
          redact: (msg) => {
            const payload = redactRequestBytes(msg.data, deps.tools, registered);
            return payload ? { payload, erase: () => eraseRequest(msg.seq) } : undefined;
          },
        }),
        startConsumerLoop({
          js: deps.js,
          spec: consumers.decide,
          source: 'decide',
          concurrency,
          log: deps.log,
          handle: (msg) => handleDecide(msg.data),
          runIdOf: (msg) => runIdInJson(msg.data),
        }),
        startConsumerLoop({
          js: deps.js,
          spec: consumers.signals,
          source: 'signals',
          concurrency,
          log: deps.log,
          handle: handleSignal,
          continuesTrace: createSignalTrace({ store, driver }),
          runIdOf: (msg) => runIdInJson(msg.data),
        }),
        startConsumerLoop({
          js: deps.js,
          spec: consumers.fork,
          source: FORKS_DLQ_SOURCE,
          concurrency,
          log: deps.log,
          handle: handleFork,
          // A fork request dead-lettered after its last delivery keeps no edited value there, nor on `dura.fork`.
          redact: (msg) => {
            const payload = redactForkEditBytes(msg.data);
            return payload ? { payload, erase: () => eraseRequest(msg.seq) } : undefined;
          },
        }),
      );
      scheduler?.start();
      await eventTriggers?.start();
      // What this replica declares, for operators (GET /flow/limits); admission never reads it.
      declaring ??= startDeclaring({
        js: deps.js,
        limits: deps.flow?.limits ?? [],
        log: deps.log,
        replicas: deps.streams?.replicas ?? 1,
      });
      deps.log.info('planner started', { concurrency });
    },
    /** Stops taking work; drives still running at `drain.deadline` are handed back for another replica. */
    async stop(drain?: DrainOptions): Promise<void> {
      declaring?.stop();
      declaring = undefined;
      await scheduler?.stop();
      await eventTriggers?.stop();
      await Promise.all(loops.map((loop) => loop.stop(drain)));
      await parking?.stop();
      await driver.flushSnapshots();
    },
  };
}

export type Planner = ReturnType<typeof createPlanner>;
