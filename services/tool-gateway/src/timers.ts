import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import {
  decodeOrThrow,
  TASK_DECODE,
  runIdInJson,
  STREAMS,
  SUBJECTS,
  TimerTaskSchema,
  type TimerTask,
} from '@dura/contracts';
import { listenerFor, type Db, type DbHandle } from '@dura/db';
import {
  duraMeter,
  ensureDurableConsumer,
  startConsumerLoop,
  type ConsumerLoop,
  type Logger,
  type DrainOptions,
} from '@dura/service-kit';
import { declareGauge, type MetricSpec } from '@dura/telemetry';
import { createTimerStore, type FiredTimer } from './timer-store';
import { createWakeLoop } from './wake-loop';

export const TIMER_CONSUMER = {
  stream: STREAMS.tasks,
  durable: 'gateway-timers',
  filterSubject: SUBJECTS.timerTask,
  maxDeliver: 20,
  ackWaitMs: 30_000,
} as const;

/** The channel the timers trigger (migration 0002) NOTIFYs on commit of every insert. */
export const TIMERS_CHANNEL = 'dura_timers';

/** tool-gateway: timers stored and not yet fired (read at scrape time). */
export const TIMERS_PENDING = {
  name: 'dura_timers_pending',
  description: 'Durable timers scheduled and not yet fired',
  labels: [],
} satisfies MetricSpec;

const FIRE_BATCH = 100;

export interface TimersOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  db: Db;
  log: Logger;
  clock?: () => Date;
  /** Longest sleep of the firing loop; a new timer wakes it at once through LISTEN/NOTIFY (default 5 s). */
  pollMs?: number;
  /** Called after timers fired, so their observations go out without waiting for the relay's poll. */
  onFired?: (fired: readonly FiredTimer[]) => void;
  /** How to LISTEN; defaults to the handle that opened `db` (see `listenerFor`). */
  listen?: DbHandle['listen'];
}

/**
 * Durable timers: a consumer stores each timer task in Postgres, and a firing loop (one per process) turns
 * due rows into `timer_fired` observations through the outbox. A timer that came due while every gateway
 * was down fires as soon as one is back.
 */
export function createTimers(options: TimersOptions) {
  const { js, jsm, db, log } = options;
  const store = createTimerStore(db, options.clock ?? (() => new Date()));
  const pollMs = options.pollMs ?? 5_000;
  const listen = options.listen ?? listenerFor(db);
  let consumer: ConsumerLoop | undefined;
  const loop = createWakeLoop({
    listen,
    channel: TIMERS_CHANNEL,
    log,
    listenWarning: 'cannot LISTEN for new timers yet; polling meanwhile',
    turn: fire,
  });
  const { wake } = loop;
  const gauge = declareGauge(duraMeter(), TIMERS_PENDING, async (observe) =>
    observe(await store.pendingCount()),
  );

  async function handleTask(msg: JsMsg): Promise<void> {
    const task = parseTimerTask(msg);
    if (!(await store.schedule(task))) return;
    if (task.wake) {
      // Due now: this process fires it at once rather than at the end of its nap.
      log.debug('timer woken', { runId: task.runId, waitId: task.waitId });
      wake();
    } else log.debug('timer scheduled', { runId: task.runId, waitId: task.waitId, dueAt: task.dueAt });
  }

  /** Fires what is due, then sleeps until the next timer is due, at most `pollMs`. */
  async function fire(): Promise<number | undefined> {
    try {
      const fired = await store.fireDue(FIRE_BATCH);
      if (fired.length > 0) {
        log.info('timers fired', { count: fired.length });
        options.onFired?.(fired);
      }
      if (fired.length === FIRE_BATCH) return undefined;
      const next = await store.msUntilNext();
      if (next !== undefined) return Math.min(pollMs, Math.max(1, next));
    } catch (err) {
      log.warn('firing timers failed; retrying', { err });
    }
    return pollMs;
  }

  return {
    /** One firing pass (for tests and tools): fires up to `limit` due timers. */
    fireDue: (limit = FIRE_BATCH) => store.fireDue(limit),
    wake,
    async start(): Promise<void> {
      await ensureDurableConsumer(jsm, TIMER_CONSUMER);
      loop.start();
      consumer = startConsumerLoop({
        js,
        spec: TIMER_CONSUMER,
        source: 'timer-tasks',
        concurrency: 16,
        log,
        handle: handleTask,
        runIdOf: (msg) => runIdInJson(msg.data),
      });
    },
    async stop(drain?: DrainOptions): Promise<void> {
      await consumer?.stop(drain);
      gauge.remove();
      await loop.stop();
      await loop.unlisten();
    },
  };
}

export type Timers = ReturnType<typeof createTimers>;

function parseTimerTask(msg: JsMsg): TimerTask {
  return decodeOrThrow(msg.data, TimerTaskSchema, 'timer task', TASK_DECODE);
}
