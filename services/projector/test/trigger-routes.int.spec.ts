// /triggers and POST /events with the shipped token format, against a real KV bucket and DURA_EVENTS stream:
// scopes, tenants (another tenant's trigger is "not found"; a tenant's ids and subjects are in its
// namespace, so its events reach only its own triggers), validation, idempotent create and delete.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { STREAMS, SUBJECTS } from '@dura/contracts';
import { createTriggerStore } from '@dura/event-store';
import { tenantPrefix } from '../src/tenant-ids';
import { callApi, type ApiAnswer, useProjectorApi, tokenAuth } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const TOKENS = {
  acme: 'acme-triggers-0123456789abcdef',
  acmeRead: 'acme-read-0123456789abcdef',
  acmeSubmit: 'acme-submit-0123456789abcdef',
  globex: 'globex-triggers-0123456789abcdef',
  operator: 'operator-0123456789abcdef',
  local: 'default-tenant-0123456789abcdef',
};
const tokenFile = JSON.stringify([
  { name: 'acme-triggers', token: TOKENS.acme, tenant: 'acme', scopes: ['read', 'schedule', 'submit'] },
  { name: 'acme-read', token: TOKENS.acmeRead, tenant: 'acme', scopes: ['read'] },
  { name: 'acme-submit', token: TOKENS.acmeSubmit, tenant: 'acme', scopes: ['read', 'submit'] },
  { name: 'globex-triggers', token: TOKENS.globex, tenant: 'globex', scopes: ['read', 'schedule', 'submit'] },
  { name: 'operator', token: TOKENS.operator, tenant: '*', scopes: ['read', 'schedule', 'submit'] },
  { name: 'local', token: TOKENS.local, tenant: 'default', scopes: ['read', 'schedule', 'submit'] },
]);

const api = useProjectorApi(() => ({ auth: tokenAuth(tokenFile) }), { startProjector: false });
const setup = () => api().setup;

beforeAll(async () => {
  // DURA_EVENTS is the planner's to create; no planner runs here.
  await setup().jsm.streams.add({ name: STREAMS.events, subjects: [SUBJECTS.allEvents] });
});

const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiAnswer> =>
  callApi(api().http.url, token, method, path, body);

const acmeToken = tenantPrefix('acme');
const stored = (tenant: string, id: string) => `${tenantPrefix(tenant)}_${id}`;
const spec = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  subject: 'dura.event.orders.>',
  request: { v: 1, agent: { kind: 'agent', name: 'fulfil' } },
  ...extra,
});
const idsOf = (answer: ApiAnswer) =>
  (answer.body['triggers'] as { spec: { id: string } }[]).map((t) => t.spec.id).sort();

/** The last message DURA_EVENTS holds on `subject`, with its msg-id. */
async function lastEvent(subject: string) {
  const msg = await setup().jsm.streams.getMessage(STREAMS.events, { last_by_subj: subject });
  return { id: msg?.header?.get('Nats-Msg-Id'), payload: msg?.json<unknown>() };
}

describe('/triggers', () => {
  it("creates a trigger for the caller's tenant, its id and subject in the tenant's namespace, idempotently", async () => {
    const created = await call('POST', '/triggers', TOKENS.acme, spec('orders'));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      created: true,
      spec: { id: stored('acme', 'orders'), tenant: 'acme', subject: `dura.event.${acmeToken}.orders.>` },
    });
    const again = await call('POST', '/triggers', TOKENS.acme, spec('orders'));
    expect([again.status, again.body['created']]).toEqual([200, false]);
    const other = await call('POST', '/triggers', TOKENS.acme, spec('orders', { subject: 'dura.event.x' }));
    expect([other.status, other.body.error?.code]).toEqual([409, 'trigger_exists']);
    // Read back by the id the caller chose, or the stored one.
    expect((await call('GET', '/triggers/orders', TOKENS.acme)).body).toMatchObject({
      spec: { tenant: 'acme' },
    });
    expect((await call('GET', `/triggers/${stored('acme', 'orders')}`, TOKENS.acme)).status).toBe(200);
  });

  it('needs scope schedule to change a trigger, and refuses another tenant in the body', async () => {
    for (const [method, path, body] of [
      ['POST', '/triggers', spec('nope')],
      ['DELETE', '/triggers/orders', undefined],
    ] as const) {
      const answer = await call(method, path, TOKENS.acmeSubmit, body);
      expect([answer.status, answer.body.error?.code], `${method} ${path}`).toEqual([
        403,
        'insufficient_scope',
      ]);
    }
    const sneaky = await call('POST', '/triggers', TOKENS.acme, spec('sneaky', { tenant: 'globex' }));
    expect([sneaky.status, sneaky.body.error?.code]).toEqual([403, 'tenant_forbidden']);
    const store = createTriggerStore({ js: setup().js });
    expect((await store.list()).map((r) => r.spec.id)).toEqual([stored('acme', 'orders')]);
  });

  it('refuses a subject outside dura.event., a wildcard first token, or one shaped like another tenant', async () => {
    for (const subject of [
      'orders.created',
      'dura.submit',
      'dura.event.>',
      'dura.event.*.created',
      `dura.event.${tenantPrefix('globex')}.orders`,
    ]) {
      const answer = await call('POST', '/triggers', TOKENS.acme, spec('bad', { subject }));
      expect(answer.status, `${subject}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(answer.body.error?.code).toMatch(/^bad_(body|subject)$/);
    }
    // The same for tenant default, whose subjects are not prefixed: another tenant's token is refused.
    const local = await call(
      'POST',
      '/triggers',
      TOKENS.local,
      spec('bad', { subject: `dura.event.${acmeToken}.x` }),
    );
    expect([local.status, local.body.error?.code]).toEqual([400, 'bad_subject']);
    const noInput = await call(
      'POST',
      '/triggers',
      TOKENS.acme,
      spec('bad', { request: { v: 1, input: 1 } }),
    );
    expect([noInput.status, noInput.body.error?.code]).toEqual([400, 'bad_body']);
  });

  it("shows a tenant only its own triggers: another tenant's is not found, to read or to delete", async () => {
    expect((await call('POST', '/triggers', TOKENS.globex, spec('orders'))).status).toBe(201);
    expect(idsOf(await call('GET', '/triggers', TOKENS.acme))).toEqual([stored('acme', 'orders')]);
    expect(idsOf(await call('GET', '/triggers', TOKENS.acmeRead))).toEqual([stored('acme', 'orders')]);
    expect(idsOf(await call('GET', '/triggers', TOKENS.operator))).toEqual(
      [stored('acme', 'orders'), stored('globex', 'orders')].sort(),
    );
    for (const [method, path] of [
      ['GET', `/triggers/${stored('globex', 'orders')}`],
      ['DELETE', `/triggers/${stored('globex', 'orders')}`],
      ['DELETE', '/triggers/missing'],
    ] as const) {
      const answer = await call(method, path, TOKENS.acme);
      expect([answer.status, answer.body.error?.code], `${method} ${path}`).toEqual([
        404,
        'trigger_not_found',
      ]);
    }
    expect((await call('GET', '/triggers/orders', TOKENS.globex)).body).toMatchObject({
      spec: { tenant: 'globex', subject: `dura.event.${tenantPrefix('globex')}.orders.>` },
    });
  });

  it('deletes a trigger: gone from the bucket when the answer comes, then not found', async () => {
    expect((await call('POST', '/triggers', TOKENS.acme, spec('brief'))).status).toBe(201);
    const deleted = await call('DELETE', '/triggers/brief', TOKENS.acme);
    expect(deleted).toMatchObject({ status: 200, body: { id: stored('acme', 'brief'), deleted: true } });
    // As the planner reads it before starting a run: from the bucket stream's leader.
    expect(await createTriggerStore({ js: setup().js }).current(stored('acme', 'brief'))).toBeUndefined();
    expect((await call('GET', '/triggers/brief', TOKENS.acme)).status).toBe(404);
    expect((await call('DELETE', '/triggers/brief', TOKENS.acme)).status).toBe(404);
  });
});

describe('POST /events', () => {
  it("publishes on the tenant's subject under its id, deduplicated by the id", async () => {
    const sent = await call('POST', '/events', TOKENS.acmeSubmit, {
      subject: 'dura.event.orders.created',
      payload: { order: 42 },
      id: 'order-42',
    });
    const subject = `dura.event.${acmeToken}.orders.created`;
    expect(sent).toMatchObject({
      status: 202,
      body: { subject, id: `${acmeToken}-order-42`, duplicate: false },
    });
    expect(await lastEvent(subject)).toEqual({ id: `${acmeToken}-order-42`, payload: { order: 42 } });
    const again = await call('POST', '/events', TOKENS.acmeSubmit, {
      subject: 'dura.event.orders.created',
      payload: { order: 42 },
      id: 'order-42',
    });
    expect(again.body).toMatchObject({ duplicate: true, seq: sent.body['seq'] });
    // Another tenant's equal id and subject are its own: not a duplicate, not on acme's subject.
    const globex = await call('POST', '/events', TOKENS.globex, {
      subject: 'dura.event.orders.created',
      payload: { order: 7 },
      id: 'order-42',
    });
    expect(globex.body).toMatchObject({
      duplicate: false,
      subject: `dura.event.${tenantPrefix('globex')}.orders.created`,
    });
    expect((await lastEvent(subject)).payload).toEqual({ order: 42 });
  });

  it('gives an event without an id a fresh one; an operator publishes on the subject as given', async () => {
    const fresh = await call('POST', '/events', TOKENS.acmeSubmit, {
      subject: 'dura.event.pings',
      payload: 'hi',
    });
    expect(fresh.body['id']).toMatch(new RegExp(`^${acmeToken}-evt_[0-9a-f]{32}$`));
    const operator = await call('POST', '/events', TOKENS.operator, {
      subject: 'dura.event.ops.note',
      payload: [1, 2],
      id: 'note-1',
    });
    expect(operator.body).toMatchObject({ subject: 'dura.event.ops.note', id: 'note-1' });
    expect(await lastEvent('dura.event.ops.note')).toEqual({ id: 'note-1', payload: [1, 2] });
  });

  it('needs scope submit, and refuses a bad subject, id or body, publishing nothing', async () => {
    const before = (await setup().jsm.streams.info(STREAMS.events)).state.messages;
    const readOnly = await call('POST', '/events', TOKENS.acmeRead, { subject: 'dura.event.x', payload: 1 });
    expect([readOnly.status, readOnly.body.error?.code]).toEqual([403, 'insufficient_scope']);
    for (const body of [
      { subject: 'dura.run.r1', payload: 1 },
      { subject: 'dura.event.>', payload: 1 },
      { subject: 'dura.event.orders.*', payload: 1 },
      { subject: 'dura.event', payload: 1 },
      { subject: 'dura.event.orders.created', payload: 1, id: 'not an id' },
      { subject: 'dura.event.orders.created' },
      { subject: 'dura.event.orders.created', payload: 1, tenant: 'globex' },
    ]) {
      const answer = await call('POST', '/events', TOKENS.acme, body);
      expect([answer.status, answer.body.error?.code], JSON.stringify(body)).toEqual([400, 'bad_body']);
    }
    // A tenant cannot reach another tenant's subjects or ids by naming them.
    const globexToken = tenantPrefix('globex');
    const intoGlobex = await call('POST', '/events', TOKENS.acme, {
      subject: `dura.event.${globexToken}.orders.created`,
      payload: 1,
    });
    expect([intoGlobex.status, intoGlobex.body.error?.code]).toEqual([400, 'bad_subject']);
    const local = await call('POST', '/events', TOKENS.local, {
      subject: 'dura.event.orders.created',
      payload: 1,
      id: `${globexToken}-order-42`,
    });
    expect([local.status, local.body.error?.code]).toEqual([400, 'reserved_run_id']);
    expect((await setup().jsm.streams.info(STREAMS.events)).state.messages).toBe(before);
  });
});
