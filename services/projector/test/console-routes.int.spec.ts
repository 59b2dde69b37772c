// The routes the web console uses beyond the read API, with tokens as shipped (a tokens file): the session,
// live model text from DURA_TOKENS as SSE (its resume and discard: token-stream.int.spec.ts), forking, the static console under /ui/, and the run
// list's console filters; each checked against a caller of another tenant and a caller without the scope.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ForkRequestSchema, STREAMS, SUBJECTS, tokensSubject } from '@dura/contracts';
import { tenantPrefix } from '../src/tenant-ids';
import { RunScript } from './support';
import { useProjectorApi, tokenAuth } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const TOKENS = {
  acmeRead: 'acme-read-0123456789abcdef',
  acmeAll: 'acme-all-0123456789abcdef',
  acmeSubmit: 'acme-submit-0123456789abcdef',
  operator: 'operator-0123456789abcdef',
};
const tokenFile = JSON.stringify([
  { name: 'acme-read', token: TOKENS.acmeRead, tenant: 'acme', scopes: ['read'] },
  { name: 'acme-all', token: TOKENS.acmeAll, tenant: 'acme', scopes: ['read', 'signal', 'cancel'] },
  { name: 'acme-submit', token: TOKENS.acmeSubmit, tenant: 'acme', scopes: ['read', 'submit'] },
  { name: 'operator', token: TOKENS.operator, tenant: '*', scopes: ['read', 'signal'] },
]);
const scripts = [
  new RunScript('con-acme-1')
    .request([], { tenant: 'acme', metadata: { team: 'pay', region: 'eu' } })
    .start(),
  new RunScript('con-acme-2').request([], { tenant: 'acme', metadata: { team: 'ops' } }).start(),
  new RunScript('con-globex-1').request([], { tenant: 'globex', metadata: { team: 'pay' } }).start(),
];
const TRACES = 'http://traces.test/trace/{traceId}';

let dir: string | undefined;
// Registered before the API's hooks, so the files go once the API has closed.
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const sys = useProjectorApi(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dura-console-dist-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><div id="root"></div>');
  await writeFile(join(dir, 'assets', 'app.js'), 'console.log(1)');
  return { auth: tokenAuth(tokenFile), console: { dir, tracesUrl: TRACES }, keepaliveMs: 200 };
});

beforeAll(async () => {
  await sys().project(scripts);
});

/** The last fork request published on `dura.fork`, decoded. */
async function lastFork() {
  const stored = await sys().setup.jsm.streams.getMessage(STREAMS.requests, { last_by_subj: SUBJECTS.fork });
  return ForkRequestSchema.parse(stored?.json());
}

async function call(path: string, o: { token?: string; body?: unknown } = {}) {
  const response = await fetch(`${sys().http.url}${path}`, {
    method: o.body === undefined ? 'GET' : 'POST',
    redirect: 'manual',
    headers: {
      ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      ...(o.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Static files are not JSON.
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the answers field by field
  return { status: response.status, headers: response.headers, body: body as any };
}

describe('GET /console/session', () => {
  it("answers the credential's name, tenant and scopes, and the tracing link", async () => {
    expect((await call('/console/session', { token: TOKENS.acmeRead })).body).toEqual({
      name: 'acme-read',
      tenant: 'acme',
      scopes: ['read'],
      tracesUrl: TRACES,
    });
    expect((await call('/console/session', { token: TOKENS.operator })).body).toMatchObject({
      tenant: '*',
      scopes: ['read', 'signal'],
    });
  });

  it('refuses a missing or unknown token', async () => {
    expect((await call('/console/session')).status).toBe(401);
    expect((await call('/console/session', { token: 'not-a-token' })).status).toBe(401);
  });
});

describe('GET /runs/:id/tokens', () => {
  it("relays the run's live text as SSE token events, dropping malformed messages", async () => {
    const abort = new AbortController();
    const response = await fetch(`${sys().http.url}/runs/con-acme-1/tokens`, {
      headers: { authorization: `Bearer ${TOKENS.acmeRead}` },
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    // The subscription is open once the stream's first comment arrives.
    while (!text.includes(': live tokens')) text += (await reader.read()).value ?? '';
    const token = (runId: string, n: number, delta: string) =>
      JSON.stringify({ runId, decision: 0, call: 0, attempt: 'a1', n, delta });
    sys().conn.nc.publish(tokensSubject('con-acme-1'), 'not json');
    sys().conn.nc.publish(tokensSubject('con-acme-2'), token('con-acme-2', 0, 'other run'));
    // Another run's text on this run's subject is not this run's.
    sys().conn.nc.publish(tokensSubject('con-acme-1'), token('con-acme-2', 0, 'misfiled'));
    ['Hel', 'lo'].forEach((delta, n) =>
      sys().conn.nc.publish(tokensSubject('con-acme-1'), token('con-acme-1', n, delta)),
    );
    while (!text.includes('"lo"')) text += (await reader.read()).value ?? '';
    abort.abort();
    const events = text.split('\n\n').filter((block) => block.includes('event: token'));
    expect(events.map((block) => (JSON.parse(block.split('data: ')[1]!) as { delta: string }).delta)).toEqual(
      ['Hel', 'lo'],
    );
  });

  it("answers 404 for another tenant's run, as for a run that does not exist", async () => {
    const other = await call('/runs/con-globex-1/tokens', { token: TOKENS.acmeRead });
    const missing = await call('/runs/no-such-run/tokens', { token: TOKENS.acmeRead });
    expect([other.status, missing.status]).toEqual([404, 404]);
    expect(other.body).toEqual({
      error: { ...missing.body.error, message: expect.stringContaining('con-globex-1') },
    });
  });
});

describe('POST /runs/:id/fork', () => {
  const forkId = `${tenantPrefix('acme')}-con-fork-1`;
  it("publishes a fork request on dura.fork with the msg-id fork:<new run id>, the id in the tenant's namespace", async () => {
    const answer = await call('/runs/con-acme-1/fork', {
      token: TOKENS.acmeSubmit,
      body: { atSeq: 1, runId: 'con-fork-1' },
    });
    expect(answer).toMatchObject({ status: 202, body: { runId: forkId, duplicate: false } });
    const again = await call('/runs/con-acme-1/fork', {
      token: TOKENS.acmeSubmit,
      body: { atSeq: 1, runId: forkId },
    });
    expect(again.body).toEqual({ runId: forkId, duplicate: true });
    expect(await lastFork()).toEqual({
      v: 1,
      sourceRunId: 'con-acme-1',
      atSeq: 1,
      runId: forkId,
    });
  });

  it('needs scope submit: a fork runs its calls again, so a token that may only signal (or read) is refused', async () => {
    const forks = async () =>
      (await sys().setup.jsm.streams.info(STREAMS.requests, { subjects_filter: SUBJECTS.fork })).state
        .subjects?.[SUBJECTS.fork] ?? 0;
    const before = await forks();
    for (const token of [TOKENS.acmeAll, TOKENS.acmeRead]) {
      const refused = await call('/runs/con-acme-1/fork', { token, body: { atSeq: 1, runId: 'con-fork-2' } });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({
        code: 'insufficient_scope',
        message: expect.stringMatching(/needs scope "submit"/),
      });
    }
    expect(await forks()).toBe(before);
    const allowed = await call('/runs/con-acme-1/fork', {
      token: TOKENS.acmeSubmit,
      body: { atSeq: 1, runId: 'con-fork-2' },
    });
    expect(allowed.status).toBe(202);
    expect(await forks()).toBe(before + 1);
  });

  it('refuses another tenant, a reserved run id and a bad body', async () => {
    expect(
      (await call('/runs/con-globex-1/fork', { token: TOKENS.acmeSubmit, body: { atSeq: 1 } })).status,
    ).toBe(404);
    const reserved = await call('/runs/con-acme-1/fork', {
      token: TOKENS.acmeSubmit,
      body: { atSeq: 1, runId: 'sch-nightly-1795889740' },
    });
    expect([reserved.status, reserved.body.error?.code]).toEqual([400, 'reserved_run_id']);
    const bad = await call('/runs/con-acme-1/fork', {
      token: TOKENS.acmeSubmit,
      body: { atSeq: 0, extra: true },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'bad_body', message: expect.stringContaining('atSeq') });
  });
});

describe('POST /runs/:id/fork with an edit', () => {
  it('records the caller as who edited, and refuses an edit the source shows cannot be made, or that names its editor', async () => {
    const edited = await call('/runs/con-acme-1/fork', {
      token: TOKENS.acmeSubmit,
      body: { atSeq: 1, runId: 'con-fork-edit-1', edit: { input: { amount: 5 } } },
    });
    expect(edited.status).toBe(202);
    expect(await lastFork()).toEqual({
      v: 2,
      sourceRunId: 'con-acme-1',
      atSeq: 1,
      runId: `${tenantPrefix('acme')}-con-fork-edit-1`,
      edit: { input: { amount: 5 }, by: 'acme-submit' },
    });
    const unknownCall = await call('/runs/con-acme-1/fork', {
      token: TOKENS.acmeSubmit,
      body: { atSeq: 1, edit: { toolResult: { callId: 'call-7', output: 1 } } },
    });
    expect([unknownCall.status, unknownCall.body.error?.code]).toEqual([400, 'fork_edit_invalid']);
    expect(unknownCall.body.error?.message).toContain('has no call "call-7"');
    const claimed = await call('/runs/con-acme-1/fork', {
      token: TOKENS.acmeSubmit,
      body: { atSeq: 1, edit: { input: 1, by: 'someone-else' } },
    });
    expect([claimed.status, claimed.body.error?.code]).toEqual([400, 'bad_body']);
    const empty = await call('/runs/con-acme-1/fork', {
      token: TOKENS.acmeSubmit,
      body: { atSeq: 1, edit: {} },
    });
    expect(empty.body.error?.message).toContain('it names neither');
  });

  it('is refused to a token without scope submit, whatever it edits', async () => {
    const refused = await call('/runs/con-acme-1/fork', {
      token: TOKENS.acmeRead,
      body: { atSeq: 1, edit: { input: 1 } },
    });
    expect(refused.status).toBe(403);
  });
});

describe('the console under /ui/', () => {
  it('redirects / to /ui/, serves files and index.html for its own routes, without a token', async () => {
    const root = await call('/');
    expect([root.status, root.headers.get('location')]).toEqual([302, '/ui/']);
    const index = await call('/ui/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toContain('text/html');
    expect(index.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect((await call('/ui/runs/con-acme-1')).body).toBe(index.body);
    const script = await call('/ui/assets/app.js');
    expect([script.status, script.headers.get('content-type'), script.body]).toEqual([
      200,
      'text/javascript; charset=utf-8',
      'console.log(1)',
    ]);
    // The console reads runs in a worker, whose policy is its script's own.
    expect(script.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect((await call('/ui/assets/missing.js')).status).toBe(404);
  });

  it('never serves a file outside its directory', async () => {
    for (const path of [
      '/ui/..%2F..%2Fetc%2Fpasswd',
      '/ui/assets/..%2F..%2F..%2Fpackage.json',
      '/ui/%2E%2E/x.js',
    ])
      expect((await call(path)).status, path).toBe(404);
  });
});

describe('GET /runs with the console filters', () => {
  const ids = async (query: string, token = TOKENS.operator) =>
    ((await call(`/runs?${query}`, { token })).body as { runs: { runId: string }[] }).runs
      .map((r) => r.runId)
      .sort();

  it('filters by metadata pairs, id prefix and tenant, and returns the tenant in each summary', async () => {
    expect(await ids('meta=team:pay')).toEqual(['con-acme-1', 'con-globex-1']);
    expect(await ids('meta=team:pay&meta=region:eu')).toEqual(['con-acme-1']);
    expect(await ids('idPrefix=con-acme')).toEqual(['con-acme-1', 'con-acme-2']);
    expect(await ids('tenant=globex')).toEqual(['con-globex-1']);
    const page = (await call('/runs?tenant=acme', { token: TOKENS.operator })).body as {
      runs: { tenant: string; children: number }[];
    };
    expect(page.runs.every((r) => r.tenant === 'acme' && r.children === 0)).toBe(true);
  });

  it("keeps a tenant's caller to its own runs whatever tenant it asks for", async () => {
    expect(await ids('tenant=globex', TOKENS.acmeRead)).toEqual([]);
    expect(await ids('meta=team:pay', TOKENS.acmeRead)).toEqual(['con-acme-1']);
  });

  it('refuses a malformed metadata filter with what to send', async () => {
    const answer = await call('/runs?meta=nocolon', { token: TOKENS.operator });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ message: expect.stringContaining('key:value') });
  });
});
