import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STREAMS, SUBJECTS } from '@dura/contracts';
import type { HttpServerHandle } from '@dura/service-kit';
import {
  corsPolicy,
  createAuthenticator,
  createJwtVerifier,
  parseTokenFile,
  type Authenticator,
} from '../src/index';
import { RunScript } from './support';
import { useProjectorApi } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const ISSUER = 'https://id.test.dura';
const AUDIENCE = 'dura-api';
const TOKENS = {
  acmeRead: 'acme-read-0123456789abcdef',
  acmeSignal: 'acme-signal-0123456789abcdef',
  acmeAll: 'acme-all-0123456789abcdef',
  globexRead: 'globex-read-0123456789abcdef',
  operator: 'operator-0123456789abcdef',
};
const tokenFile = JSON.stringify([
  { name: 'acme-read', token: TOKENS.acmeRead, tenant: 'acme', scopes: ['read'] },
  { name: 'acme-signal', token: TOKENS.acmeSignal, tenant: 'acme', scopes: ['signal'] },
  { name: 'acme-all', token: TOKENS.acmeAll, tenant: 'acme', scopes: ['read', 'signal', 'cancel'] },
  { name: 'globex-read', token: TOKENS.globexRead, tenant: 'globex', scopes: ['read'] },
  { name: 'operator', token: TOKENS.operator, tenant: '*', scopes: ['read'] },
]);
const scripts = [
  RunScript.complete('run-default', 1),
  new RunScript('run-acme').request([], { tenant: 'acme' }).start(),
  new RunScript('run-acme-2').request([], { tenant: 'acme' }),
  new RunScript('run-globex').request([], { tenant: 'globex' }).start(),
];

let withCors: HttpServerHandle | undefined;
let open: HttpServerHandle | undefined;
/** One live stream per credential. */
let limited: HttpServerHandle | undefined;
let jwks: Server | undefined;
let signingKey: CryptoKey;
let strangerKey: CryptoKey;
let auth: Authenticator;

const sys = useProjectorApi(async () => {
  const pair = await generateKeyPair('ES256');
  signingKey = pair.privateKey;
  strangerKey = (await generateKeyPair('ES256')).privateKey;
  const publicJwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  jwks = await serveJwks({ keys: [publicJwk] });
  const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
  auth = createAuthenticator({
    tokens: parseTokenFile(tokenFile, 'tokens.json'),
    verifyJwt: createJwtVerifier({ issuer: ISSUER, jwksUrl, audience: AUDIENCE, tenantClaim: 'dura_tenant' }),
  });
  return { auth };
});

beforeAll(async () => {
  const cors = corsPolicy('https://ops.example.com');
  withCors = await sys().serve({ auth, cors }, { trustedOrigins: cors.origins });
  open = await sys().serve({});
  limited = await sys().serve({ auth, streamLimits: { perToken: 1, total: 100 } });
  await sys().project(scripts);
});

// Registered after the API's hooks, so it runs before they close the servers.
afterAll(async () => {
  for (const stream of streams) stream.abort();
  await new Promise((resolve) => (jwks ? jwks.close(resolve) : resolve(undefined)));
});

function serveJwks(body: unknown): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

interface Answer {
  status: number;
  headers: Headers;
  body: { error?: { code: string; message: string }; runs?: { runId: string }[]; [key: string]: unknown };
}

async function call(
  path: string,
  o: { token?: string; method?: string; body?: unknown; origin?: string; server?: HttpServerHandle } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (o.token !== undefined) headers['authorization'] = `Bearer ${o.token}`;
  if (o.origin !== undefined) headers['origin'] = o.origin;
  if (o.body !== undefined || o.method === 'POST') headers['content-type'] = 'application/json';
  const response = await fetch(`${(o.server ?? sys().http).url}${path}`, {
    method: o.method ?? 'GET',
    headers,
    ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
}

/** A JWT of the test issuer; subject `user-7` unless `subject` says otherwise (null: none). */
function jwt(
  claims: Record<string, unknown>,
  o: { key?: CryptoKey; expiresIn?: string; audience?: string; subject?: string | null } = {},
) {
  const token = new SignJWT({ dura_tenant: 'acme', scope: 'read', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(ISSUER)
    .setAudience(o.audience ?? AUDIENCE);
  if (o.subject !== null) token.setSubject(o.subject ?? 'user-7');
  return token
    .setIssuedAt()
    .setExpirationTime(o.expiresIn ?? '5m')
    .sign(o.key ?? signingKey);
}

/** Every read path of one run; its first event's seq for the causes path. */
async function readPaths(runId: string): Promise<string[]> {
  const [first] = await sys().setup.store.read(runId);
  return [
    `/runs/${runId}`,
    `/runs/${runId}/events`,
    `/runs/${runId}/state?at=100`,
    `/runs/${runId}/events/${first?.seq ?? 1}/causes`,
  ];
}

describe('API authentication', () => {
  it('answers a request without a token with 401, a Bearer challenge and a JSON error saying what to send', async () => {
    const answer = await call('/runs');
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="dura"');
    expect(answer.body.error).toEqual({
      code: 'unauthenticated',
      message: expect.stringContaining('Authorization: Bearer <token>'),
    });
  });

  it('answers an unknown token with 401 invalid_token', async () => {
    const answer = await call('/runs', { token: 'guessed-0123456789abcdef' });
    expect([answer.status, answer.body.error?.code]).toEqual([401, 'invalid_token']);
  });

  it('answers a token without the read scope with 403, naming the scope', async () => {
    const answer = await call('/runs', { token: TOKENS.acmeSignal });
    expect(answer.status).toBe(403);
    expect(answer.body.error?.code).toBe('insufficient_scope');
    expect(answer.body.error?.message).toContain('needs scope "read"');
    expect(answer.headers.get('www-authenticate')).toContain('scope="read"');
  });

  it('keeps health and the API document open (probes and tooling carry no token)', async () => {
    expect((await call('/healthz')).status).toBe(200);
    expect((await call('/openapi.json')).status).toBe(200);
  });

  it('answers 200 to a read token, and lists only its tenant runs', async () => {
    const acme = await call('/runs', { token: TOKENS.acmeRead });
    expect(acme.status).toBe(200);
    expect(acme.body.runs?.map((r) => r.runId).sort()).toEqual(['run-acme', 'run-acme-2']);
    const globex = await call('/runs', { token: TOKENS.globexRead });
    expect(globex.body.runs?.map((r) => r.runId)).toEqual(['run-globex']);
    const operator = await call('/runs', { token: TOKENS.operator });
    expect(operator.body.runs?.map((r) => r.runId).sort()).toEqual([
      'run-acme',
      'run-acme-2',
      'run-default',
      'run-globex',
    ]);
  });

  it('serves its own tenant run on every read path', async () => {
    for (const path of await readPaths('run-acme')) {
      const answer = await call(path, { token: TOKENS.acmeRead });
      expect([path, answer.status]).toEqual([path, 200]);
    }
    expect((await call('/runs/run-acme', { token: TOKENS.acmeRead })).body).toMatchObject({
      runId: 'run-acme',
      tenant: 'acme',
    });
  });

  it('answers 404 for another tenant run on every read path, exactly as for a run that does not exist', async () => {
    for (const path of [...(await readPaths('run-globex')), ...(await readPaths('run-default'))]) {
      const answer = await call(path, { token: TOKENS.acmeRead });
      expect([path, answer.status, answer.body.error?.code]).toEqual([path, 404, 'run_not_found']);
    }
    const foreign = await call('/runs/run-globex', { token: TOKENS.acmeRead });
    const missing = await call('/runs/run-nowhere', { token: TOKENS.acmeRead });
    expect(foreign.body.error?.message.replace('run-globex', 'X')).toBe(
      missing.body.error?.message.replace('run-nowhere', 'X'),
    );
  });

  it('refuses the live stream of another tenant run with 404 and opens its own', async () => {
    const foreign = await call('/runs/run-globex/stream', { token: TOKENS.acmeRead });
    expect(foreign.status).toBe(404);
    const abort = new AbortController();
    const own = await fetch(`${sys().http.url}/runs/run-acme/stream`, {
      headers: { authorization: `Bearer ${TOKENS.acmeRead}` },
      signal: abort.signal,
    });
    expect([own.status, own.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    abort.abort();
  });

  it('keeps projection errors (every tenant) to operators', async () => {
    expect((await call('/projection-errors', { token: TOKENS.acmeRead })).status).toBe(403);
    expect((await call('/projection-errors', { token: TOKENS.operator })).status).toBe(200);
  });
});

describe('signals and cancellation over HTTP', () => {
  async function lastSignal(): Promise<unknown> {
    const msg = await sys().setup.jsm.streams.getMessage(STREAMS.requests, { last_by_subj: SUBJECTS.signal });
    return msg ? msg.json() : undefined;
  }

  it('needs scope signal: a read token gets 403 and nothing is published', async () => {
    const before = await lastSignal();
    const answer = await call('/runs/run-acme/signals', {
      token: TOKENS.acmeRead,
      method: 'POST',
      body: { name: 'approve' },
    });
    expect([answer.status, answer.body.error?.code]).toEqual([403, 'insufficient_scope']);
    expect(await lastSignal()).toEqual(before);
  });

  it('publishes the signal for a token with scope signal, idempotently on signalId', async () => {
    const request = { token: TOKENS.acmeSignal, method: 'POST', body: { name: 'approve', signalId: 's-1' } };
    const answer = await call('/runs/run-acme/signals', request);
    expect(answer).toMatchObject({
      status: 202,
      body: { runId: 'run-acme', signalId: 's-1', duplicate: false },
    });
    expect(await lastSignal()).toEqual({ v: 1, runId: 'run-acme', signalId: 's-1', name: 'approve' });
    expect((await call('/runs/run-acme/signals', request)).body).toMatchObject({ duplicate: true });
  });

  it('needs scope cancel for a signal named cancel and for the cancel route', async () => {
    const asSignal = await call('/runs/run-acme/signals', {
      token: TOKENS.acmeSignal,
      method: 'POST',
      body: { name: 'cancel' },
    });
    expect([asSignal.status, asSignal.body.error?.message]).toEqual([
      403,
      expect.stringContaining('"cancel"'),
    ]);
    expect((await call('/runs/run-acme/cancel', { token: TOKENS.acmeSignal, method: 'POST' })).status).toBe(
      403,
    );
    const cancelled = await call('/runs/run-acme/cancel', {
      token: TOKENS.acmeAll,
      method: 'POST',
      body: { reason: 'test over' },
    });
    expect(cancelled.status).toBe(202);
    expect(await lastSignal()).toMatchObject({
      runId: 'run-acme',
      name: 'cancel',
      payload: { reason: 'test over' },
    });
  });

  it('answers 404 to a signal or cancel for another tenant run, and publishes nothing', async () => {
    const before = await lastSignal();
    for (const [path, body] of [
      ['/runs/run-globex/signals', { name: 'approve' }],
      ['/runs/run-globex/cancel', {}],
    ] as const) {
      const answer = await call(path, { token: TOKENS.acmeAll, method: 'POST', body });
      expect([path, answer.status]).toEqual([path, 404]);
    }
    expect(await lastSignal()).toEqual(before);
  });

  it('answers 400 to a body that is not a signal', async () => {
    const answer = await call('/runs/run-acme/signals', {
      token: TOKENS.acmeAll,
      method: 'POST',
      body: { name: 'approve', extra: true },
    });
    expect([answer.status, answer.body.error?.code]).toEqual([400, 'bad_body']);
  });
});

describe('OIDC JWTs', () => {
  it('accepts a JWT signed by the issuer key, with its tenant and scopes', async () => {
    const answer = await call('/runs', { token: await jwt({}) });
    expect(answer.status).toBe(200);
    expect(answer.body.runs?.map((r) => r.runId).sort()).toEqual(['run-acme', 'run-acme-2']);
  });

  it('refuses an expired JWT with 401', async () => {
    const expired = await jwt({}, { expiresIn: '-5m' });
    const answer = await call('/runs', { token: expired });
    expect([answer.status, answer.body.error?.message]).toEqual([401, expect.stringContaining('expired')]);
  });

  it('refuses a forged JWT (signed by another key) with 401', async () => {
    const answer = await call('/runs', { token: await jwt({}, { key: strangerKey }) });
    expect([answer.status, answer.body.error?.message]).toEqual([401, expect.stringContaining('signature')]);
  });

  it('refuses a JWT for another audience, or without a tenant claim, with 401', async () => {
    expect((await call('/runs', { token: await jwt({}, { audience: 'other-api' }) })).status).toBe(401);
    const noTenant = await call('/runs', { token: await jwt({ dura_tenant: undefined }) });
    expect([noTenant.status, noTenant.body.error?.message]).toEqual([
      401,
      expect.stringContaining('dura_tenant'),
    ]);
  });

  it('refuses a JWT whose tenant claim is "*": a claim never widens to every tenant', async () => {
    for (const path of ['/runs', '/runs/run-globex', '/projection-errors']) {
      const answer = await call(path, { token: await jwt({ dura_tenant: '*' }) });
      expect([path, answer.status, answer.body.error?.code]).toEqual([path, 401, 'invalid_token']);
      expect(answer.body.error?.message).toMatch(
        /a JWT never grants every tenant.*PROJECTOR_API_TOKENS_FILE/,
      );
      expect(JSON.stringify(answer.body)).not.toContain('run-globex"');
    }
  });

  it('still gives every tenant to the operator API token configured with tenant "*"', async () => {
    const operator = await call('/runs', { token: TOKENS.operator });
    expect(operator.status).toBe(200);
    expect(operator.body.runs?.map((run) => run.runId)).toEqual(
      expect.arrayContaining(['run-acme', 'run-globex', 'run-default']),
    );
    expect((await call('/runs/run-globex', { token: TOKENS.operator })).status).toBe(200);
  });

  it('refuses a JWT without the scope with 403', async () => {
    const answer = await call('/runs', { token: await jwt({ scope: 'signal' }) });
    expect(answer.status).toBe(403);
  });

  it('keeps a JWT to its tenant: another tenant run is 404', async () => {
    expect((await call('/runs/run-globex', { token: await jwt({}) })).status).toBe(404);
    expect((await call('/runs/run-globex', { token: await jwt({ dura_tenant: 'globex' }) })).status).toBe(
      200,
    );
  });
});

describe('CORS', () => {
  it('is off by default: no allow-origin header, and no preflight route', async () => {
    const answer = await call('/runs', { token: TOKENS.acmeRead });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    expect((await call('/runs', { method: 'OPTIONS' })).status).toBe(404);
    // Bound to loopback, the API refuses pages of other sites outright (not only their reading the answer).
    const foreign = await call('/runs', { token: TOKENS.acmeRead, origin: 'https://ops.example.com' });
    expect([foreign.status, foreign.body.error?.code]).toEqual([403, 'origin_forbidden']);
  });

  it('allows only a configured origin, on answers and errors alike, and answers its preflight', async () => {
    const allowed = await call('/runs', { server: withCors, origin: 'https://ops.example.com' });
    expect(allowed.status).toBe(401);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://ops.example.com');
    const preflight = await call('/runs/run-acme', {
      server: withCors,
      method: 'OPTIONS',
      origin: 'https://ops.example.com',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    const other = await call('/runs', {
      server: withCors,
      token: TOKENS.acmeRead,
      origin: 'https://evil.example',
    });
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('an API without credentials configured (local development)', () => {
  it('answers without a token and shows every tenant, as before tenants', async () => {
    const answer = await call('/runs', { server: open });
    expect(answer.status).toBe(200);
    expect(answer.body.runs).toHaveLength(4);
  });
});

const streams: AbortController[] = [];

/** Opens a live run stream on the API allowing one per credential, held open: its status. */
async function openStream(runId: string, token: string): Promise<number> {
  const controller = new AbortController();
  streams.push(controller);
  const response = await fetch(`${limited!.url}/runs/${runId}/stream`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  if (response.status !== 200) await response.text();
  return response.status;
}

describe('live streams per credential', () => {
  it('counts a credential by kind, issuer, tenant and name: no credential uses up the slots of another', async () => {
    expect(await openStream('run-acme', TOKENS.acmeRead)).toBe(200);
    expect(await openStream('run-acme', TOKENS.acmeRead)).toBe(429); // its one slot is taken
    // A JWT of another tenant, and one of the same tenant, whose subject is the token's name: slots of their own.
    const globexNamedLikeToken = await jwt({ dura_tenant: 'globex' }, { subject: 'acme-read' });
    expect(await openStream('run-globex', globexNamedLikeToken)).toBe(200);
    expect(await openStream('run-acme', await jwt({}, { subject: 'acme-read' }))).toBe(200);
    // JWTs without a subject: a tenant's never use up another tenant's, and a client id tells clients apart.
    expect(await openStream('run-acme', await jwt({}, { subject: null }))).toBe(200);
    expect(await openStream('run-globex', await jwt({ dura_tenant: 'globex' }, { subject: null }))).toBe(200);
    expect(await openStream('run-acme', await jwt({ client_id: 'reports' }, { subject: null }))).toBe(200);
    // Each of them is still held to its own limit.
    expect(await openStream('run-globex', globexNamedLikeToken)).toBe(429);
    expect(await openStream('run-acme', await jwt({}, { subject: null }))).toBe(429);
  });
});
