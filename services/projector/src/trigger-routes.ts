import type { JetStreamClient } from '@nats-io/jetstream';
import { BUCKETS, EventBodySchema, EventTriggerBodySchema, type EventTriggerRecord } from '@dura/contracts';
import { createTriggerStore, TriggerError } from '@dura/event-store';
import type { HttpResponse } from '@dura/service-kit';
import { ALL_TENANTS } from './auth/caller';
import type { ApiRoute } from './auth/guard';
import { postRoute } from './body-route';
import { bodyTenant } from './body-tenant';
import { doorWrite, publishCommand } from './command-door';
import { tenantEventId, tenantEventSubject, tenantTriggerId } from './tenant-ids';
import { tenantRecords } from './tenant-records';

const ok = (status: number, body: unknown): HttpResponse => ({ status, body });

/**
 * `/triggers`: the event triggers of the caller's tenant (scope `read` to look, `schedule` to change), in the
 * KV bucket `dura_triggers`; `POST /events`: publishes an event on `dura.event.…` (scope `submit`: the
 * triggers reading its subject start runs). A tenant's trigger ids, event ids and subjects are in its
 * namespace (`tenantTriggerId`, `tenantEventId`, `tenantEventSubject`), so a tenant's events reach only its
 * own triggers; another tenant's trigger is "not found". The projector's NATS user must be allowed to write
 * the bucket and publish `dura.event.>` (the write door of DURA_PROJECTOR in deploy/nats/permissions.conf).
 */
export function triggerRoutes(deps: { js: JetStreamClient }, clock: () => number = Date.now): ApiRoute[] {
  const store = createTriggerStore({ js: deps.js });
  const { idOf, visible, deleteRoute } = tenantRecords<EventTriggerRecord>({
    what: 'trigger',
    namespaced: tenantTriggerId,
    read: (id) => kv(() => store.read(id)),
    notFound: (id) =>
      new TriggerError(
        'trigger_not_found',
        `no event trigger "${id}": check the id (GET /triggers lists yours)`,
      ),
  });
  return [
    {
      method: 'GET',
      path: '/triggers',
      scope: 'read',
      async handle({ caller }) {
        const list = await kv(() => store.list());
        const mine = list.filter((r) => caller.tenant === ALL_TENANTS || r.spec.tenant === caller.tenant);
        return ok(200, { triggers: mine });
      },
    },
    {
      method: 'GET',
      path: '/triggers/:id',
      scope: 'read',
      handle: async ({ params, caller }) => ok(200, await visible(caller, idOf(params, caller))),
    },
    postRoute(
      '/triggers',
      'schedule',
      {
        schema: EventTriggerBodySchema,
        what: 'an event trigger',
        holds: 'an event trigger: {"id", "subject", "request"}',
      },
      async (body, { caller }) => {
        const owner = bodyTenant(caller, body.tenant, 'manages event triggers');
        if ('refused' in owner) return owner.refused;
        const { tenant } = owner;
        // Its id and subject in its tenant's namespace: its runs (trg-<id>-<key>) and its events are its own.
        const spec = {
          ...body,
          tenant,
          id: tenantTriggerId(tenant, body.id),
          subject: tenantEventSubject(tenant, body.subject, 'the trigger subject'),
        };
        try {
          const { record, created } = await kv(() => store.create(spec, clock()));
          return ok(created ? 201 : 200, { ...record, created });
        } catch (err) {
          if (err instanceof TriggerError && err.code === 'trigger_exists')
            return ok(409, { error: { code: err.code, message: err.message } });
          throw err;
        }
      },
    ),
    // As `eventTriggers.delete`: once this answers, no message published afterwards starts a run of it.
    deleteRoute('/triggers/:id', (id) => kv(() => store.remove(id))),
    postRoute(
      '/events',
      'submit',
      {
        schema: EventBodySchema,
        what: 'an event',
        holds: 'an event: {"subject": "dura.event.…", "payload": …, "id"?}',
      },
      async (body, { caller }) => {
        const asked = body.id ?? `evt_${crypto.randomUUID().replaceAll('-', '')}`;
        const operator = caller.tenant === ALL_TENANTS;
        const subject = operator
          ? body.subject
          : tenantEventSubject(caller.tenant, body.subject, 'the event subject');
        const id = operator ? asked : tenantEventId(caller.tenant, asked);
        const ack = await publishCommand(deps.js, {
          subject,
          body: body.payload,
          msgID: id,
          what: `the event ${id} on ${subject}`,
        });
        return ok(202, { subject, id, seq: ack.seq, duplicate: ack.duplicate });
      },
    ),
  ];
}

/** A read or write of the triggers bucket; one the projector's NATS user may not make says so. */
function kv<T>(call: () => Promise<T>): Promise<T> {
  const target = { subject: `$KV.${BUCKETS.triggers}.>`, what: 'the request to the event triggers bucket' };
  return doorWrite(target, call);
}
