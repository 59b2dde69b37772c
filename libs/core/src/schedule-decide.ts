import { MAX_SCHEDULE_HISTORY, scheduleRunId, type ScheduleRecord, type ScheduleTick } from '@dura/contracts';
import type { TickPlan } from './schedule-plan';

/** Keeps the newest `MAX_SCHEDULE_HISTORY` ticks. */
export function withHistory(record: ScheduleRecord, ticks: ScheduleTick[]): ScheduleRecord {
  return { ...record, history: [...record.history, ...ticks].slice(-MAX_SCHEDULE_HISTORY) };
}

/** Whether `decideTicks` needs to know if the schedule's last run still runs (one status read, else none). */
export function needsLastRunStatus(record: ScheduleRecord, plan: TickPlan): boolean {
  return record.lastRunId !== undefined && (plan.fire.length > 0 || record.buffered !== undefined);
}

/**
 * What the due ticks do under the overlap policy, as the schedule's next record: runs to start and to cancel
 * go into `pending` (published once this record is written), every tick into `history`. `busy`: the last
 * run has not ended. Undefined when nothing changes.
 */
export function decideTicks(
  record: ScheduleRecord,
  plan: TickPlan,
  busy: boolean,
): ScheduleRecord | undefined {
  const { spec } = record;
  const ticks: ScheduleTick[] = [];
  let next: ScheduleRecord = { ...record, cursor: Math.max(record.cursor, plan.cursor) };
  let running = busy;
  const start = (tick: number, action: ScheduleTick['action']) => {
    const runId = scheduleRunId(spec.id, tick);
    next = {
      ...next,
      lastRunId: runId,
      pending: { ...next.pending, start: [...next.pending.start, { tick, runId }] },
    };
    ticks.push({ tick, runId, action });
    running = true;
  };
  if (plan.skipped > 0) ticks.push({ tick: plan.cursor, runId: '', action: 'missed', count: plan.skipped });
  if (next.buffered !== undefined && !running) {
    const tick = next.buffered;
    delete next.buffered;
    start(tick, 'started');
  }
  for (const tick of plan.fire) {
    if (!running || spec.overlap === 'allow_all') start(tick, 'started');
    else if (spec.overlap === 'cancel_previous') {
      if (next.lastRunId)
        next = { ...next, pending: { ...next.pending, cancel: [...next.pending.cancel, next.lastRunId] } };
      start(tick, 'cancelled_previous');
    } else if (spec.overlap === 'buffer_one' && next.buffered === undefined) {
      next = { ...next, buffered: tick };
      ticks.push({ tick, runId: scheduleRunId(spec.id, tick), action: 'buffered' });
    } else ticks.push({ tick, runId: scheduleRunId(spec.id, tick), action: 'skipped' });
  }
  if (ticks.length === 0 && next.buffered === record.buffered) return undefined;
  return withHistory(next, ticks);
}
