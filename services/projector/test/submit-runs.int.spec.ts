// POST /runs with the shipped token format: who may submit, for which tenant, idempotency on the run id,
// validation and size limits. What reaches the run intake is read back from the DURA_REQUESTS stream.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { RunRequestSchema, type RunRequest } from '@dura/contracts';
import { apiSubmissions } from '../src/db/schema';
import { tenantPrefix } from '../src/tenant-ids';
import { RunScript } from './support';
import { useProjectorApi, tokenAuth, submitted } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const TOKENS = {
  acmeSubmit: 'acme-submit-0123456789abcdef',
  acmeRead: 'acme-read-0123456789abcdef',
  globexSubmit: 'globex-submit-0123456789abcdef',
  operator: 'operator-0123456789abcdef',
};
const tokenFile = JSON.stringify([
  { name: 'acme-submit', token: TOKENS.acmeSubmit, tenant: 'acme', scopes: ['read', 'submit'] },
  { name: 'acme-read', token: TOKENS.acmeRead, tenant: 'acme', scopes: ['read', 'signal', 'cancel'] },
  { name: 'globex-submit', token: TOKENS.globexSubmit, tenant: 'globex', scopes: ['submit'] },
  { name: 'operator', token: TOKENS.operator, tenant: '*', scopes: ['submit'] },
]);

const sys = useProjectorApi(() => ({ auth: tokenAuth(tokenFile) }));

beforeAll(async () => {
  // A run of tenant globex submitted over NATS, known to the projection.
  await sys().project([new RunScript('nats-globex').request([], { tenant: 'globex' }).start()]);
});

interface Answer {
  status: number;
  headers: Headers;
  body: { error?: { code: string; message: string }; [key: string]: unknown };
}

async function submit(
  body: unknown,
  o: { token?: string; key?: string; raw?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...o.headers };
  if (o.token !== undefined) headers['authorization'] = `Bearer ${o.token}`;
  if (o.key !== undefined) headers['idempotency-key'] = o.key;
  const response = await fetch(`${sys().http.url}/runs`, {
    method: 'POST',
    headers,
    body: o.raw ?? JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
}

/** Every request on `dura.submit` published under `runId` (its Nats-Msg-Id). */
async function published(runId: string): Promise<RunRequest[]> {
  const all = await submitted(sys().setup);
  return all.filter((msg) => msg.id === runId).map((msg) => RunRequestSchema.parse(msg.json));
}

/** The run id of acme's key (acme's namespace). */
const acme = (key: string) => `${tenantPrefix('acme')}-${key}`;

const plan = (note = 'hello') => ({
  agent: { kind: 'scripted', steps: [{ tool: 'echo', args: { note } }] },
  input: { note },
});

describe('POST /runs: credentials', () => {
  it('answers 401 without a token and with an unknown one, and publishes nothing', async () => {
    expect((await submit(plan(), { key: 'no-token' })).status).toBe(401);
    const forged = await submit(plan(), { key: 'forged-token', token: 'not-a-token-0123456789' });
    expect(forged.status).toBe(401);
    expect(forged.body.error?.code).toBe('invalid_token');
    expect(await published('no-token')).toHaveLength(0);
    expect(await published('forged-token')).toHaveLength(0);
  });

  it('answers 403 to a credential without scope submit, naming the scope', async () => {
    const answer = await submit(plan(), { token: TOKENS.acmeRead, key: 'no-scope' });
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({
      code: 'insufficient_scope',
      message: expect.stringMatching(/"submit"/),
    });
    expect(await published(acme('no-scope'))).toHaveLength(0);
  });
});

describe('POST /runs: tenants', () => {
  it("submits for the caller's tenant, and answers the run id with links to its page, events and stream", async () => {
    const answer = await submit(plan(), { token: TOKENS.acmeSubmit, key: 'acme-run-1' });
    const runId = acme('acme-run-1');
    expect(runId).toMatch(/^t[0-9a-f]{16}-acme-run-1$/);
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({
      outcome: 'started',
      runId,
      duplicate: false,
      links: { run: `/runs/${runId}`, events: `/runs/${runId}/events`, stream: `/runs/${runId}/stream` },
    });
    expect(answer.headers.get('location')).toBe(`/runs/${runId}`);
    const [request] = await published(runId);
    expect(request).toMatchObject({ v: 1, runId, tenant: 'acme', input: { note: 'hello' } });
    // The run id answered, passed back as the key, is the same run.
    const again = await submit(plan(), { token: TOKENS.acmeSubmit, key: runId });
    expect(again.body).toMatchObject({ runId, duplicate: true });
  });

  it("refuses a body naming another tenant than the caller's (403), and publishes nothing", async () => {
    const answer = await submit(
      { ...plan(), tenant: 'globex' },
      { token: TOKENS.acmeSubmit, key: 'acme-as-globex' },
    );
    expect(answer.status).toBe(403);
    expect(answer.body.error?.code).toBe('tenant_forbidden');
    expect(await published(acme('acme-as-globex'))).toHaveLength(0);
    expect(await published(`${tenantPrefix('globex')}-acme-as-globex`)).toHaveLength(0);
  });

  it('lets an operator (tenant *) name the tenant, default when it names none', async () => {
    expect(
      (await submit({ ...plan(), tenant: 'globex' }, { token: TOKENS.operator, key: 'op-globex' })).status,
    ).toBe(202);
    expect((await submit(plan(), { token: TOKENS.operator, key: 'op-default' })).status).toBe(202);
    expect((await published(`${tenantPrefix('globex')}-op-globex`))[0]?.tenant).toBe('globex');
    expect((await published('op-default'))[0]?.tenant).toBe('default');
  });

  it("keeps each tenant's keys apart: another tenant's key answers as a free one, and starts its own run", async () => {
    const mine = await submit(plan(), { token: TOKENS.acmeSubmit, key: 'shared-key' });
    const theirs = await submit(plan('other'), { token: TOKENS.globexSubmit, key: 'shared-key' });
    const fresh = await submit(plan('other'), { token: TOKENS.globexSubmit, key: 'never-used-key' });
    expect([mine.status, theirs.status, fresh.status]).toEqual([202, 202, 202]);
    expect(theirs.body['duplicate']).toBe(fresh.body['duplicate']);
    expect(theirs.body['runId']).not.toBe(mine.body['runId']);
    expect((await published(acme('shared-key'))).map((r) => r.tenant)).toEqual(['acme']);
    expect((await published(String(theirs.body['runId']))).map((r) => r.tenant)).toEqual(['globex']);
    // A run id of another tenant, sent as a key, is a key of the caller's namespace like any other.
    const taken = await submit(plan('other'), { token: TOKENS.globexSubmit, key: acme('shared-key') });
    expect(taken.status).toBe(202);
    expect(taken.body['runId']).not.toBe(acme('shared-key'));
    expect((await published(acme('shared-key'))).map((r) => r.tenant)).toEqual(['acme']);
  });

  it("refuses the scheduler's and event triggers' run id prefixes from every caller (400), publishing nothing", async () => {
    for (const [key, token] of [
      ['sch-nightly-1795889740', TOKENS.globexSubmit],
      ['trg-orders-42', TOKENS.acmeSubmit],
      ['sch-nightly-1795889741', TOKENS.operator],
    ] as const) {
      const answer = await submit(plan(), { token, key });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({
        code: 'reserved_run_id',
        message: expect.stringMatching(/only runs started by schedules \("sch-"\), event triggers/),
      });
      expect(await published(key)).toHaveLength(0);
    }
    const byBody = await submit({ ...plan(), runId: 'sch-nightly-1' }, { token: TOKENS.operator });
    expect(byBody.body.error?.code).toBe('reserved_run_id');
  });

  it("refuses an operator's key for tenant default that looks like another tenant's run id", async () => {
    const answer = await submit(plan(), { token: TOKENS.operator, key: acme('op-tries') });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('reserved_run_id');
    // For another tenant an operator's key is in that tenant's namespace, as the tenant's own would be.
    const forAcme = await submit({ ...plan(), tenant: 'acme' }, { token: TOKENS.operator, key: 'op-acme' });
    expect(forAcme.body['runId']).toBe(acme('op-acme'));
  });
});

describe('POST /runs: idempotency', () => {
  it('the same Idempotency-Key twice with the same body: one request on the intake, the second a duplicate', async () => {
    const first = await submit(plan(), { token: TOKENS.acmeSubmit, key: 'idem-1' });
    const second = await submit(plan(), { token: TOKENS.acmeSubmit, key: 'idem-1' });
    expect([first.status, second.status]).toEqual([202, 202]);
    expect([first.body['duplicate'], second.body['duplicate']]).toEqual([false, true]);
    expect(await published(acme('idem-1'))).toHaveLength(1);
    const rows = await sys()
      .conn.db.select()
      .from(apiSubmissions)
      .where(eq(apiSubmissions.runId, acme('idem-1')));
    expect(rows).toHaveLength(1);
  });

  it('runId in the body works as the key; a header and body that disagree are refused', async () => {
    const byBody = await submit({ ...plan(), runId: 'idem-body' }, { token: TOKENS.acmeSubmit });
    const again = await submit(plan(), { token: TOKENS.acmeSubmit, key: 'idem-body' });
    expect(byBody.body['runId']).toBe(acme('idem-body'));
    expect(again.body['duplicate']).toBe(true);
    const mismatch = await submit(
      { ...plan(), runId: 'idem-x' },
      { token: TOKENS.acmeSubmit, key: 'idem-y' },
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error?.message).toMatch(/differ/);
  });

  it('the same key with another body is a conflict (409) and publishes nothing new', async () => {
    await submit(plan('a'), { token: TOKENS.acmeSubmit, key: 'idem-2' });
    const other = await submit(plan('b'), { token: TOKENS.acmeSubmit, key: 'idem-2' });
    expect(other.status).toBe(409);
    expect(other.body.error?.message).toMatch(/different request/);
    expect((await published(acme('idem-2'))).map((r) => r.input)).toEqual([{ note: 'a' }]);
  });

  it('without a key, each submission is a new run', async () => {
    const a = await submit(plan(), { token: TOKENS.acmeSubmit });
    const b = await submit(plan(), { token: TOKENS.acmeSubmit });
    expect(a.body['runId']).not.toBe(b.body['runId']);
  });
});

describe('POST /runs: validation and limits', () => {
  const refused = async (answer: Promise<Answer>, status: number, code: string, message?: RegExp) => {
    const { status: got, body } = await answer;
    expect(got).toBe(status);
    expect(body.error?.code).toBe(code);
    if (message) expect(body.error?.message).toMatch(message);
  };
  const as = { token: TOKENS.acmeSubmit };

  it('refuses what is not a run request, saying what is wrong', async () => {
    await refused(submit({ input: 1 }, { ...as, key: 'v-1' }), 400, 'bad_body', /agent/);
    await refused(submit({ ...plan(), v: 2 }, { ...as, key: 'v-2' }), 400, 'bad_body');
    await refused(submit({ ...plan(), surprise: true }, { ...as, key: 'v-3' }), 400, 'bad_body', /surprise/);
    // Child runs are the planner's to request: a caller cannot claim a parent.
    await refused(
      submit({ ...plan(), parent: { runId: 'p', callId: 'c' } }, { ...as, key: 'v-4' }),
      400,
      'bad_body',
    );
    await refused(submit(undefined, { ...as, key: 'v-5', raw: '{"agent": oops' }), 400, 'bad_body', /JSON/);
    await refused(submit(undefined, { ...as, key: 'v-6', raw: '' }), 400, 'bad_body', /no body/);
    await refused(submit(plan(), { ...as, key: 'has spaces' }), 400, 'bad_header');
    for (const key of ['v-1', 'v-2', 'v-3', 'v-4', 'v-5', 'v-6'])
      expect(await published(acme(key))).toHaveLength(0);
  });

  it('holds a body to the limits of dura.submit: 413 over 1 MiB, 400 past the depth limit', async () => {
    const big = { ...plan(), input: { blob: 'x'.repeat(1024 * 1024) } };
    await refused(submit(big, { ...as, key: 'too-big' }), 413, 'body_too_large', /exceeds 1048576 bytes/);
    let deep: unknown = 'bottom';
    for (let i = 0; i < 80; i += 1) deep = [deep];
    await refused(
      submit({ ...plan(), input: deep }, { ...as, key: 'too-deep' }),
      400,
      'bad_body',
      /deep|depth/,
    );
    expect(await published(acme('too-big'))).toHaveLength(0);
    expect(await published(acme('too-deep'))).toHaveLength(0);
  });
});
