import { randomUUID } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import {
  RUN_REQUEST_VERSION,
  SIGNAL_VERSION,
  SUBJECTS,
  type RunRequest,
  type ScheduleRecord,
  type SignalRequest,
} from '@dura/contracts';
import {
  CANCEL_SIGNAL,
  decideTicks,
  isTerminal,
  needsLastRunStatus,
  planTicks,
  timingOf,
  type RunStatus,
} from '@dura/core';
import { createScheduleStore, type StoredSchedule } from '@dura/event-store';
import { failpoint, type Logger } from '@dura/service-kit';
import { createRecordSweep } from './record-sweep';
import { clearPublished, createClaimWatch, DEFAULT_CLAIM_TIMEOUT_MS, hasPending } from './schedule-claims';

/** A run as the overlap policy sees it: its folded status ('none' before its first event) and whose it is. */
export interface ScheduledRun {
  status: RunStatus;
  tenant: string;
  /** The schedule that started it (its request's `dura.schedule` metadata), if any. */
  schedule: string | undefined;
}

export interface SchedulerDeps {
  js: JetStreamClient;
  log: Logger;
  clock: () => Date;
  runOf: (runId: string) => Promise<ScheduledRun>;
  /** How often each replica looks at every schedule, on average (default 250 ms). */
  pollMs?: number;
  replicas?: number;
  /**
   * How long a decision another replica claimed may stay unpublished, unchanged, before this replica takes
   * it over (default 5 s): the holder died between its decision and its publishes.
   */
  claimTimeoutMs?: number;
  /** This replica's name in claims (default: a random one per scheduler). */
  replicaId?: string;
  /** A monotonic clock in ms for claim timeouts (default `performance.now`): never another host's time. */
  monotonic?: () => number;
}

export { nextPassDelay } from './record-sweep';

/** A run submitted but not yet in the log counts as running this long after its tick, then as gone. */
const UNSEEN_RUN_GRACE_MS = 60_000;

/**
 * Starts the runs of every schedule in `dura_schedules`. Every replica ticks; a tick's decision (which runs
 * to start or cancel) is written by compare-and-set on the schedule's revision before anything is published,
 * so exactly one replica decides each tick. The decision names its replica (`pending.claimedBy`), and only
 * that replica publishes it: another one takes it over (by compare-and-set again) only after it stayed
 * unchanged for `claimTimeoutMs` by its own clock, i.e. its holder died. Publishing twice would still be
 * harmless (the run id is derived from the schedule and the tick, and is the msg-id); it happens only to a
 * holder stalled past the timeout.
 */
export function createScheduler(deps: SchedulerDeps) {
  const store = createScheduleStore({ js: deps.js, ...(deps.replicas ? { replicas: deps.replicas } : {}) });
  const pollMs = deps.pollMs ?? 250;
  const me = deps.replicaId ?? `replica-${randomUUID().slice(0, 8)}`;
  const claims = createClaimWatch({
    timeoutMs: deps.claimTimeoutMs ?? DEFAULT_CLAIM_TIMEOUT_MS,
    monotonic: deps.monotonic ?? (() => performance.now()),
  });

  async function active(record: ScheduleRecord, now: number): Promise<boolean> {
    const runId = record.lastRunId;
    if (runId === undefined) return false;
    const run = await deps.runOf(runId);
    if (run.status !== 'none') {
      // Only the schedule's own run counts: a run of that id started by anyone else never holds its ticks.
      if (run.tenant === record.spec.tenant && run.schedule === record.spec.id)
        return !isTerminal(run.status);
      deps.log.warn("a schedule's last run id belongs to another run; its ticks go on", {
        schedule: record.spec.id,
        runId,
        runTenant: run.tenant,
      });
      return false;
    }
    const tick = record.history.findLast((h) => h.runId === runId)?.tick ?? 0;
    return now - tick < UNSEEN_RUN_GRACE_MS;
  }

  /** The decision for the ticks due now: the next record (pending runs included), or undefined if none. */
  async function decide(record: ScheduleRecord, now: number): Promise<ScheduleRecord | undefined> {
    const plan = planTicks(timingOf(record.spec), record.cursor, now, record.spec.catchUp);
    const busy = needsLastRunStatus(record, plan) ? await active(record, now) : false;
    return decideTicks(record, plan, busy);
  }

  function requestOf(record: ScheduleRecord, tick: number, runId: string): RunRequest {
    const { spec } = record;
    return {
      ...spec.request,
      v: RUN_REQUEST_VERSION,
      runId,
      tenant: spec.tenant,
      metadata: {
        ...spec.request.metadata,
        'dura.schedule': spec.id,
        'dura.tick': new Date(tick).toISOString(),
      },
    };
  }

  /** Publishes what the record says is pending (claimed by this replica), then clears it. */
  async function carryOut(stored: StoredSchedule): Promise<void> {
    const { record } = stored;
    for (const runId of record.pending.cancel) {
      const signalId = `schedule-${record.spec.id}-cancel`;
      const signal: SignalRequest = {
        v: SIGNAL_VERSION,
        runId,
        signalId,
        name: CANCEL_SIGNAL,
        payload: {
          reason: `schedule ${record.spec.id}: a newer tick started (overlap policy cancel_previous)`,
        },
      };
      await deps.js.publish(SUBJECTS.signal, JSON.stringify(signal), {
        msgID: `signal:${runId}:${signalId}`,
      });
    }
    for (const { tick, runId } of record.pending.start) {
      await deps.js.publish(SUBJECTS.submit, JSON.stringify(requestOf(record, tick, runId)), {
        msgID: runId,
      });
      deps.log.info('schedule started a run', {
        schedule: record.spec.id,
        runId,
        tick: new Date(tick).toISOString(),
      });
    }
    await clearPublished(store, stored);
  }

  /** Publishes a pending decision if it is this replica's to publish: its own, unclaimed, or abandoned. */
  async function takeOver(stored: StoredSchedule): Promise<void> {
    const { record, revision } = stored;
    const holder = record.pending.claimedBy;
    if (holder === me) return carryOut(stored);
    if (holder !== undefined && !claims.abandoned(record.spec.id, revision)) return;
    const claimed = { ...record, pending: { ...record.pending, claimedBy: me } };
    const written = await store.compareAndSet(record.spec.id, claimed, revision);
    if (written === undefined) return; // another replica claimed it first
    claims.forget(record.spec.id);
    if (holder !== undefined)
      deps.log.warn('schedule decision left unpublished by its replica; publishing it', {
        schedule: record.spec.id,
        replica: holder,
        timeoutMs: deps.claimTimeoutMs ?? DEFAULT_CLAIM_TIMEOUT_MS,
      });
    await carryOut({ record: claimed, revision: written });
  }

  /** False when the schedule is gone (deleted, or unreadable by this version). */
  async function tickOne(id: string): Promise<boolean> {
    const stored = await store.read(id);
    if (!stored) return false;
    const { record, revision } = stored;
    if (hasPending(record)) {
      await takeOver(stored);
      return true;
    }
    claims.forget(id);
    if (record.paused) return true;
    const decided = await decide(record, deps.clock().getTime());
    if (!decided) return true;
    const next = hasPending(decided)
      ? { ...decided, pending: { ...decided.pending, claimedBy: me } }
      : decided;
    const written = await store.compareAndSet(id, next, revision);
    if (written === undefined) return true; // another replica decided these ticks
    deps.log.debug('schedule ticks decided', {
      schedule: id,
      start: next.pending.start.map((s) => s.runId),
      cancel: next.pending.cancel,
    });
    failpoint('planner.schedule-after-decide');
    await carryOut({ record: next, revision: written });
    return true;
  }

  const sweep = createRecordSweep({
    listKeys: () => store.ids(),
    visit: tickOne,
    pollMs,
    log: deps.log,
    keyField: 'schedule',
    visitFailed: 'schedule tick failed; retried on the next pass',
    passFailed: 'schedules unreadable; retried on the next pass',
  });

  return { store, start: sweep.start, stop: sweep.stop };
}

export type Scheduler = ReturnType<typeof createScheduler>;
