import type { JetStreamClient } from '@nats-io/jetstream';
import {
  type EventTriggerRecord,
  type ScheduleRecord,
  type ScheduleSpecInput,
  type ScheduleTick,
} from '@dura/contracts';
import type { createScheduleStore, createTriggerStore } from '@dura/event-store';
import type * as NatsSide from './nats-side';
import { nextTicks, timingOf } from '@dura/core';
import type { JetStreamHandles } from './jetstream-handles';

/** A schedule as the SDK shows it: its record plus its next ticks. */
export interface ScheduleView extends ScheduleRecord {
  /** The next ticks (ISO times), none while paused. */
  next: string[];
}

const view = (record: ScheduleRecord, now: number, count = 5): ScheduleView => ({
  ...record,
  next: record.paused
    ? []
    : nextTicks(timingOf(record.spec), Math.max(now, record.cursor), count).map((t) =>
        new Date(t).toISOString(),
      ),
});

/**
 * Schedules (recurring runs) and event triggers, stored in their KV buckets: any planner replica reads them.
 * The calls need a NATS user allowed to write `dura_schedules` / `dura_triggers` (deploy/nats/permissions.conf).
 */
export function createTriggerApi(nats: () => Promise<JetStreamHandles>, now: () => number = Date.now) {
  let stores:
    | Promise<{
        schedules: ReturnType<typeof createScheduleStore>;
        triggers: ReturnType<typeof createTriggerStore>;
      }>
    | undefined;
  const open = () => {
    // The KV stores load with the first call (with NATS itself), like the rest of the client's NATS side.
    stores ??= Promise.all([nats(), import('./nats-side')]).then(
      ([{ js }, store]: [{ js: JetStreamClient }, typeof NatsSide]) => ({
        schedules: store.createScheduleStore({ js }),
        triggers: store.createTriggerStore({ js }),
      }),
    );
    return stores;
  };
  return {
    schedules: {
      /** Creates a schedule (idempotent: the same spec again is a no-op; another under its id is refused). */
      async create(spec: ScheduleSpecInput): Promise<{ schedule: ScheduleView; created: boolean }> {
        const { record, created } = await (await open()).schedules.create(spec, now());
        return { schedule: view(record, now()), created };
      },
      async list(filter: { tenant?: string } = {}): Promise<ScheduleView[]> {
        return (await (await open()).schedules.list(filter.tenant)).map((r) => view(r, now(), 1));
      },
      /** The schedule with its recent ticks (`history`, newest last) and next `count` ticks. */
      async get(id: string, count = 5): Promise<ScheduleView> {
        return view(await (await open()).schedules.get(id), now(), count);
      },
      async pause(id: string): Promise<ScheduleView> {
        return view(await (await open()).schedules.setPaused(id, true, now()), now());
      },
      /** Resumes from now: ticks that passed while paused do not run. */
      async resume(id: string): Promise<ScheduleView> {
        return view(await (await open()).schedules.setPaused(id, false, now()), now());
      },
      /** Starts one run now (a planner publishes it); idempotent on `key` (default: this second). */
      async trigger(id: string, key?: string): Promise<{ runId: string }> {
        const { runId } = await (await open()).schedules.trigger(id, now(), key);
        return { runId };
      },
      /** True when it existed; runs it started are not touched. */
      async delete(id: string): Promise<boolean> {
        return (await open()).schedules.remove(id);
      },
      /** The runs a schedule started, newest last (at most the last 100 ticks). */
      async runs(id: string): Promise<ScheduleTick[]> {
        return (await (await open()).schedules.get(id)).history.filter((h) => h.runId !== '');
      },
    },
    eventTriggers: {
      async create(spec: unknown): Promise<{ trigger: EventTriggerRecord; created: boolean }> {
        const { record, created } = await (await open()).triggers.create(spec, now());
        return { trigger: record, created };
      },
      async list(): Promise<EventTriggerRecord[]> {
        return (await open()).triggers.list();
      },
      async delete(id: string): Promise<boolean> {
        return (await open()).triggers.remove(id);
      },
    },
  };
}
