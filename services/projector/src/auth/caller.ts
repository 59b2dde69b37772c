import { API_SCOPES, DuraError, type ApiScope } from '@dura/contracts';

/** What a credential may do: read runs (and schedules and triggers), send signals (approve, reject, named events), cancel runs, submit runs (and send events), manage schedules and triggers. */
export const SCOPES = API_SCOPES;
export type Scope = ApiScope;

/** The tenant of a caller that may see every tenant's runs (an operator). */
export const ALL_TENANTS = '*';

/**
 * Who is calling, as the credential says: a name for logs, a tenant (or `*`), and scopes. `kind` and `issuer`
 * say who vouched for it (the tokens file, a JWT's issuer, or nobody: an API without credentials), so that
 * two credentials of one name from different sources or tenants are never taken for one.
 */
export interface Caller {
  name: string;
  tenant: string;
  scopes: ReadonlySet<Scope>;
  kind: 'token' | 'jwt' | 'open';
  /** A JWT's `iss`. */
  issuer?: string;
}

/** The caller of an API without credentials configured (local development): everything, every tenant. */
export const OPEN_CALLER: Caller = {
  name: 'anonymous',
  tenant: ALL_TENANTS,
  scopes: new Set(SCOPES),
  kind: 'open',
};

/**
 * 401 (no or bad credential), 403 (a good credential without the scope), 503 (the issuer's keys cannot be
 * fetched). `challenge` is the `WWW-Authenticate` value (RFC 6750).
 */
export class AuthError extends DuraError {
  constructor(
    readonly status: 401 | 403 | 503,
    code: 'unauthenticated' | 'invalid_token' | 'insufficient_scope' | 'auth_unavailable',
    message: string,
    readonly challenge?: string,
  ) {
    super(code, message, { retryable: status === 503 });
  }
}

const REALM = 'Bearer realm="dura"';

export function missingCredential(): AuthError {
  return new AuthError(
    401,
    'unauthenticated',
    'this API needs a bearer token: send the header "Authorization: Bearer <token>" (the CLI reads DURA_API_TOKEN or --api-token-file)',
    REALM,
  );
}

export function invalidToken(why: string): AuthError {
  return new AuthError(
    401,
    'invalid_token',
    `the bearer token is not accepted: ${why}`,
    `${REALM}, error="invalid_token"`,
  );
}

/** Throws a 403 unless the caller holds `scope`. */
export function requireScope(caller: Caller, scope: Scope, what: string): void {
  if (caller.scopes.has(scope)) return;
  const held = [...caller.scopes].join(', ') || 'none';
  throw new AuthError(
    403,
    'insufficient_scope',
    `${what} needs scope "${scope}"; the credential "${caller.name}" has ${held}: use a token issued with "${scope}"`,
    `${REALM}, error="insufficient_scope", scope="${scope}"`,
  );
}

/** Throws a 403 unless the caller may see every tenant (operator endpoints that are not about one run). */
export function requireAllTenants(caller: Caller, what: string): void {
  if (caller.tenant === ALL_TENANTS) return;
  throw new AuthError(
    403,
    'insufficient_scope',
    `${what} shows every tenant's data; the credential "${caller.name}" is for tenant "${caller.tenant}": use an operator token (tenant "*")`,
    `${REALM}, error="insufficient_scope"`,
  );
}

/** The tenant a query must be limited to, or undefined for a caller that sees every tenant. */
export function tenantFilter(caller: Caller): string | undefined {
  return caller.tenant === ALL_TENANTS ? undefined : caller.tenant;
}
