import { describe, expect, it } from 'vitest';
import { ConfigError } from '@dura/service-kit';
import {
  AuthError,
  corsHeaders,
  corsPolicy,
  createAuthenticator,
  loadProjectorConfig,
  parseTokenFile,
  preflightHeaders,
  requireScope,
  sha256Hex,
} from '../src/index';

const READER = 'reader-token-0123456789';
const table = parseTokenFile(
  JSON.stringify([
    { name: 'reader', token: READER, tenant: 'acme', scopes: ['read'] },
    { name: 'ops', sha256: sha256Hex('ops-token-0123456789abc'), tenant: '*', scopes: ['read', 'cancel'] },
  ]),
  'tokens.json',
);

async function refusal(promise: Promise<unknown>): Promise<AuthError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof AuthError)) throw new Error(`expected an AuthError, got ${String(err)}`);
  return err;
}

describe('the tokens file', () => {
  it('maps each token, given in clear or as its sha256, to its caller', () => {
    expect(table.get(sha256Hex(READER))).toMatchObject({ name: 'reader', tenant: 'acme' });
    expect([...(table.get(sha256Hex('ops-token-0123456789abc'))?.scopes ?? [])]).toEqual(['read', 'cancel']);
  });

  it.each([
    ['not JSON', '{', /is not valid JSON/],
    ['empty', '[]', /lists no token/],
    [
      'an unknown scope',
      '[{"name":"a","token":"0123456789abcdef0","tenant":"t","scopes":["admin"]}]',
      /scopes/,
    ],
    [
      'both token and sha256',
      `[{"name":"a","token":"0123456789abcdef0","sha256":"${'a'.repeat(64)}","tenant":"t","scopes":["read"]}]`,
      /exactly one of/,
    ],
    ['a short token', '[{"name":"a","token":"short","tenant":"t","scopes":["read"]}]', /at least 16/],
    ['a bad tenant', '[{"name":"a","token":"0123456789abcdef0","tenant":"a b","scopes":["read"]}]', /tenant/],
    [
      'a token twice',
      '[{"name":"a","token":"0123456789abcdef0","tenant":"t","scopes":["read"]},{"name":"b","token":"0123456789abcdef0","tenant":"u","scopes":["read"]}]',
      /listed twice/,
    ],
  ])('refuses a file with %s, naming the problem', (_what, text, problem) => {
    expect(() => parseTokenFile(text, 'tokens.json')).toThrow(problem);
  });
});

describe('the authenticator', () => {
  const auth = createAuthenticator({ tokens: table });

  it('without credentials configured lets everyone in as every tenant', async () => {
    const open = createAuthenticator({});
    expect(open.enabled).toBe(false);
    expect(await open.authenticate(undefined)).toMatchObject({ tenant: '*' });
  });

  it('answers a missing header with 401 unauthenticated and a Bearer challenge', async () => {
    const err = await refusal(auth.authenticate(undefined));
    expect([err.status, err.code, err.challenge]).toEqual([401, 'unauthenticated', 'Bearer realm="dura"']);
  });

  it('answers a malformed header or an unknown token with 401 invalid_token', async () => {
    expect((await refusal(auth.authenticate(`Basic ${READER}`))).code).toBe('invalid_token');
    const unknown = await refusal(auth.authenticate('Bearer not-a-configured-token'));
    expect([unknown.status, unknown.message]).toEqual([
      401,
      'the bearer token is not accepted: it is not one of the configured API tokens',
    ]);
  });

  it('finds a configured token (the scheme in any case)', async () => {
    expect(await auth.authenticate(`bearer ${READER}`)).toMatchObject({ name: 'reader', tenant: 'acme' });
  });

  it('refuses a missing scope with 403, naming the scope needed and those held', async () => {
    const reader = await auth.authenticate(`Bearer ${READER}`);
    expect(() => requireScope(reader, 'read', 'GET /runs')).not.toThrow();
    const err = (() => {
      try {
        requireScope(reader, 'cancel', 'POST /runs/:id/cancel');
      } catch (e) {
        return e as AuthError;
      }
      throw new Error('expected a refusal');
    })();
    expect([err.status, err.code]).toEqual([403, 'insufficient_scope']);
    expect(err.message).toContain('needs scope "cancel"; the credential "reader" has read');
  });
});

describe('CORS', () => {
  it('is off by default: no header for any origin', () => {
    expect(corsHeaders(corsPolicy(undefined), 'https://evil.example')).toEqual({});
  });

  it('allows only the configured origins, and varies on Origin', () => {
    const policy = corsPolicy('https://ops.example.com, http://localhost:3000/');
    expect(corsHeaders(policy, 'http://localhost:3000')).toEqual({
      'access-control-allow-origin': 'http://localhost:3000',
      vary: 'Origin',
    });
    expect(corsHeaders(policy, 'https://evil.example')).toEqual({ vary: 'Origin' });
    expect(preflightHeaders(policy, 'https://ops.example.com')).toMatchObject({
      'access-control-allow-headers': 'authorization, content-type, last-event-id',
    });
  });

  it('refuses an entry that is not an origin', () => {
    expect(() => corsPolicy('https://ops.example.com/path')).toThrow(/is not an origin/);
    expect(() => corsPolicy('*')).toThrow(/is not an origin/);
  });
});

describe('the auth configuration', () => {
  const base = { DATABASE_URL: 'postgres://u@h:5432/d' };

  it('is off by default', () => {
    expect(loadProjectorConfig(base)).toMatchObject({ PROJECTOR_AUTH_REQUIRED: false });
  });

  it('refuses PROJECTOR_AUTH_REQUIRED=true without credentials', () => {
    expect(() => loadProjectorConfig({ ...base, PROJECTOR_AUTH_REQUIRED: 'true' })).toThrow(ConfigError);
  });

  it('refuses half an OIDC setup, naming what is missing', () => {
    expect(() => loadProjectorConfig({ ...base, PROJECTOR_OIDC_ISSUER: 'https://id.example.com' })).toThrow(
      /missing PROJECTOR_OIDC_JWKS_URL, PROJECTOR_OIDC_AUDIENCE/,
    );
  });
});
