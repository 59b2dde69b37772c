import type { JetStreamClient } from '@nats-io/jetstream';
import * as z from 'zod';
import {
  BUCKETS,
  MESSAGE_LIMITS,
  ScheduleSpecSchema,
  TriggerIdSchema,
  type ScheduleRecord,
} from '@dura/contracts';
import { nextTicks, timingOf } from '@dura/core';
import { createScheduleStore, ScheduleError } from '@dura/event-store';
import type { HttpResponse } from '@dura/service-kit';
import { ALL_TENANTS } from './auth/caller';
import type { ApiRoute } from './auth/guard';
import { bodyTenant } from './body-tenant';
import { doorWrite } from './command-door';
import { BadQuery } from './query-params';
import { readJsonBody } from './request-body';
import { tenantScheduleId } from './tenant-ids';
import { tenantRecords } from './tenant-records';

/** Body of `POST /schedules/:id/trigger` (may be empty). */
export const TriggerBodySchema = z
  .object({
    key: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,40}$/)
      .optional(),
  })
  .strict();

/** Body of `POST /schedules`: a schedule spec; `tenant` may be left out (the caller's). */
export const ScheduleBodySchema = ScheduleSpecSchema;

const view = (record: ScheduleRecord, now: number) => ({
  ...record,
  next: record.paused
    ? []
    : nextTicks(timingOf(record.spec), Math.max(now, record.cursor), 5).map((t) => new Date(t).toISOString()),
});

/**
 * `/schedules`: the schedules of the caller's tenant (scope `read` to look, `schedule` to change). They live
 * in the KV bucket `dura_schedules`, which the projector's NATS user must be allowed to write (the write door of
 * DURA_PROJECTOR in deploy/nats/permissions.conf). A schedule's id is in its tenant's namespace
 * (`tenantScheduleId`): a tenant's caller names it by the id it chose or the stored one; another tenant's
 * schedule of the same id is another schedule.
 */
export function scheduleRoutes(deps: { js: JetStreamClient }, clock: () => number = Date.now): ApiRoute[] {
  const store = createScheduleStore({ js: deps.js });
  const { idOf, visible, deleteRoute } = tenantRecords<ScheduleRecord>({
    what: 'schedule',
    namespaced: tenantScheduleId,
    read: (id) => kv(() => store.get(id)),
    notFound: (id) =>
      new ScheduleError(
        'schedule_not_found',
        `no schedule "${id}": check the id (GET /schedules lists yours)`,
      ),
  });
  const ok = (status: number, body: unknown): HttpResponse => ({ status, body });
  return [
    {
      method: 'GET',
      path: '/schedules',
      scope: 'read',
      async handle({ caller }) {
        const tenant = caller.tenant === ALL_TENANTS ? undefined : caller.tenant;
        const list = await kv(() => store.list(tenant));
        return ok(200, { schedules: list.map((r) => view(r, clock())) });
      },
    },
    {
      method: 'GET',
      path: '/schedules/:id',
      scope: 'read',
      handle: async ({ params, caller }) =>
        ok(200, view(await visible(caller, idOf(params, caller)), clock())),
    },
    {
      method: 'POST',
      path: '/schedules',
      scope: 'schedule',
      async handle({ req, caller }) {
        const body = await readJsonBody(req, {
          maxBytes: MESSAGE_LIMITS.maxBytes,
          emptyIsObject: false,
          what: 'a schedule: {"id", "cron" or "everyMs", "request", ...}',
        });
        if (body === null || typeof body !== 'object' || Array.isArray(body))
          throw new BadQuery('the body of a schedule must be a JSON object', 'bad_body');
        const owner = bodyTenant(caller, (body as { tenant?: unknown }).tenant, 'manages schedules');
        if ('refused' in owner) return owner.refused;
        const { tenant } = owner;
        // The id in the schedule's tenant's namespace: its runs (sch-<id>-<tick>) are its tenant's alone.
        const asId = (body as { id?: unknown }).id;
        const id =
          typeof asId === 'string' && typeof tenant === 'string' && TriggerIdSchema.safeParse(asId).success
            ? tenantScheduleId(tenant, asId)
            : asId;
        try {
          const { record, created } = await kv(() => store.create({ ...body, id, tenant } as never, clock()));
          return ok(created ? 201 : 200, { ...view(record, clock()), created });
        } catch (err) {
          if (err instanceof ScheduleError && err.code === 'schedule_exists')
            return ok(409, { error: { code: err.code, message: err.message } });
          throw err;
        }
      },
    },
    ...(['pause', 'resume'] as const).map((action): ApiRoute => ({
      method: 'POST',
      path: `/schedules/:id/${action}`,
      scope: 'schedule',
      async handle({ params, caller }) {
        const id = idOf(params, caller);
        await visible(caller, id);
        const record = await kv(() => store.setPaused(id, action === 'pause', clock()));
        return ok(200, view(record, clock()));
      },
    })),
    {
      method: 'POST',
      path: '/schedules/:id/trigger',
      scope: 'schedule',
      async handle({ params, req, caller }) {
        const id = idOf(params, caller);
        const body = TriggerBodySchema.safeParse(
          await readJsonBody(req, { maxBytes: 1024, emptyIsObject: true, what: '{"key": "..."}' }),
        );
        if (!body.success)
          throw new BadQuery('the body of a trigger is {"key"?: letters, digits, "_", "-"}', 'bad_body');
        await visible(caller, id);
        const { runId } = await kv(() => store.trigger(id, clock(), body.data.key));
        return ok(202, {
          runId,
          links: { run: `/runs/${runId}`, events: `/runs/${runId}/events`, stream: `/runs/${runId}/stream` },
        });
      },
    },
    deleteRoute('/schedules/:id', (id) => kv(() => store.remove(id))),
  ];
}

/** A read or write of the schedules bucket; one the projector's NATS user may not make says so. */
function kv<T>(call: () => Promise<T>): Promise<T> {
  const target = { subject: `$KV.${BUCKETS.schedules}.>`, what: 'the request to the schedules bucket' };
  return doorWrite(target, call);
}
