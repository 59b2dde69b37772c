// /schedules with the shipped token format: scopes, tenants (another tenant's schedule is "not found"),
// validation, idempotent create, pause, resume, trigger and delete, against a real KV bucket.
import { describe, expect, it, vi } from 'vitest';
import { createScheduleStore } from '@dura/event-store';
import { tenantPrefix } from '../src/tenant-ids';
import { callApi, type ApiAnswer, useProjectorApi, tokenAuth } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const TOKENS = {
  acme: 'acme-schedule-0123456789abcdef',
  acmeRead: 'acme-read-0123456789abcdef',
  globex: 'globex-schedule-0123456789abcdef',
  operator: 'operator-0123456789abcdef',
};
const tokenFile = JSON.stringify([
  { name: 'acme-schedule', token: TOKENS.acme, tenant: 'acme', scopes: ['read', 'schedule'] },
  { name: 'acme-read', token: TOKENS.acmeRead, tenant: 'acme', scopes: ['read', 'submit'] },
  { name: 'globex-schedule', token: TOKENS.globex, tenant: 'globex', scopes: ['read', 'schedule'] },
  { name: 'operator', token: TOKENS.operator, tenant: '*', scopes: ['read', 'schedule'] },
]);

const api = useProjectorApi(() => ({ auth: tokenAuth(tokenFile) }), { startProjector: false });

const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiAnswer> =>
  callApi(api().http.url, token, method, path, body);

/** The stored id of a tenant's schedule (its tenant's namespace). */
const idOf = (tenant: string, id: string) => `${tenantPrefix(tenant)}_${id}`;
const daily = idOf('acme', 'daily');

const spec = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  cron: '0 9 * * mon-fri',
  timeZone: 'Europe/Paris',
  request: { v: 1, agent: { kind: 'agent', name: 'report' } },
  ...extra,
});

describe('/schedules', () => {
  it('creates a schedule for the caller tenant, idempotently; another definition under its id is 409', async () => {
    const created = await call('POST', '/schedules', TOKENS.acme, spec('daily'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      created: true,
      paused: false,
      spec: { id: daily, tenant: 'acme' },
    });
    expect((created.body['next'] as string[]).length).toBe(5);
    const again = await call('POST', '/schedules', TOKENS.acme, spec('daily'));
    expect([again.status, again.body['created']]).toEqual([200, false]);
    const other = await call('POST', '/schedules', TOKENS.acme, spec('daily', { cron: '0 10 * * *' }));
    expect([other.status, other.body.error?.code]).toEqual([409, 'schedule_exists']);
  });

  it('needs scope schedule to change anything, and refuses another tenant in the body', async () => {
    const noScope = await call('POST', '/schedules', TOKENS.acmeRead, spec('nope'));
    expect([noScope.status, noScope.body.error?.code]).toEqual([403, 'insufficient_scope']);
    const otherTenant = await call('POST', '/schedules', TOKENS.acme, spec('sneaky', { tenant: 'globex' }));
    expect([otherTenant.status, otherTenant.body.error?.code]).toEqual([403, 'tenant_forbidden']);
    expect((await call('POST', '/schedules/daily/pause', TOKENS.acmeRead)).status).toBe(403);
    const store = createScheduleStore({ js: api().setup.js });
    expect((await store.list()).map((r) => r.spec.id)).toEqual([daily]);
  });

  it('refuses an invalid schedule, saying what is wrong', async () => {
    const badCron = await call('POST', '/schedules', TOKENS.acme, spec('bad', { cron: '61 * * * *' }));
    expect([badCron.status, badCron.body.error?.code]).toEqual([400, 'invalid_schedule']);
    expect(badCron.body.error?.message).toMatch(/"61" is not a minute/);
    const badZone = await call('POST', '/schedules', TOKENS.acme, spec('bad', { timeZone: 'Mars/Olympus' }));
    expect(badZone.body.error?.message).toMatch(/time zone "Mars\/Olympus" is unknown/);
    const both = await call('POST', '/schedules', TOKENS.acme, spec('bad', { everyMs: 60_000 }));
    expect(both.body.error?.message).toMatch(/exactly one of "cron"/);
    const badPolicy = await call('POST', '/schedules', TOKENS.acme, spec('bad', { overlap: 'sometimes' }));
    expect(badPolicy.status).toBe(400);
  });

  it("shows a tenant only its own schedules: another tenant's is not found, to read or to change", async () => {
    await call('POST', '/schedules', TOKENS.globex, spec('globex_daily'));
    const acmeList = await call('GET', '/schedules', TOKENS.acme);
    expect((acmeList.body['schedules'] as { spec: { id: string } }[]).map((s) => s.spec.id)).toEqual([daily]);
    const operatorList = await call('GET', '/schedules', TOKENS.operator);
    expect((operatorList.body['schedules'] as unknown[]).length).toBe(2);
    for (const [method, path] of [
      ['GET', '/schedules/globex_daily'],
      ['POST', '/schedules/globex_daily/pause'],
      ['POST', '/schedules/globex_daily/trigger'],
      ['DELETE', '/schedules/globex_daily'],
      // By its stored id too.
      ['GET', `/schedules/${idOf('globex', 'globex_daily')}`],
      ['DELETE', `/schedules/${idOf('globex', 'globex_daily')}`],
    ] as const) {
      const answer = await call(method, path, TOKENS.acme);
      expect([answer.status, answer.body.error?.code], `${method} ${path}`).toEqual([
        404,
        'schedule_not_found',
      ]);
    }
    expect((await call('GET', '/schedules/globex_daily', TOKENS.globex)).status).toBe(200);
  });

  it('pauses, resumes, triggers (idempotent on the key) and deletes', async () => {
    const paused = await call('POST', '/schedules/daily/pause', TOKENS.acme);
    expect([paused.body['paused'], paused.body['next']]).toEqual([true, []]);
    expect((await call('POST', '/schedules/daily/resume', TOKENS.acme)).body['paused']).toBe(false);
    const triggered = await call('POST', '/schedules/daily/trigger', TOKENS.acme, { key: 'k1' });
    expect(triggered.status).toBe(202);
    expect(triggered.body['runId']).toBe(`sch-${daily}-mk1`);
    await call('POST', '/schedules/daily/trigger', TOKENS.acme, { key: 'k1' });
    const record = await call('GET', '/schedules/daily', TOKENS.acme);
    expect(record.body['pending']).toEqual({
      start: [{ tick: expect.any(Number), runId: `sch-${daily}-mk1` }],
      cancel: [],
    });
    // The stored id the API answered names the same schedule.
    expect((await call('GET', `/schedules/${daily}`, TOKENS.acme)).status).toBe(200);
    expect((await call('DELETE', '/schedules/daily', TOKENS.acme)).status).toBe(200);
    expect((await call('GET', '/schedules/daily', TOKENS.acme)).status).toBe(404);
  });

  it("keeps each tenant's schedule ids apart: the same id is another schedule, created as if free", async () => {
    const acme = await call('POST', '/schedules', TOKENS.acme, spec('nightly'));
    const globex = await call('POST', '/schedules', TOKENS.globex, spec('nightly', { cron: '0 3 * * *' }));
    expect([acme.status, globex.status]).toEqual([201, 201]);
    expect(globex.body).toMatchObject({ created: true, spec: { id: idOf('globex', 'nightly') } });
    const mine = await call('GET', '/schedules/nightly', TOKENS.acme);
    expect(mine.body).toMatchObject({ spec: { id: idOf('acme', 'nightly'), cron: '0 9 * * mon-fri' } });
    // Their runs are apart too: a tick of one is never a tick of the other.
    const a = await call('POST', '/schedules/nightly/trigger', TOKENS.acme, { key: 'same' });
    const g = await call('POST', '/schedules/nightly/trigger', TOKENS.globex, { key: 'same' });
    expect(a.body['runId']).not.toBe(g.body['runId']);
  });
});
