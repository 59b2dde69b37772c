import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import { TenantSchema } from '@dura/contracts';
import { ALL_TENANTS, AuthError, invalidToken, SCOPES, type Caller, type Scope } from './caller';

export interface OidcOptions {
  issuer: string;
  jwksUrl: string;
  audience: string;
  /** The claim holding the caller's one tenant (a wildcard is refused: JWTs never reach every tenant). */
  tenantClaim: string;
  /** Leeway for `exp`/`nbf` between this host's clock and the issuer's (default 30 s). */
  clockToleranceSeconds?: number;
}

/** Asymmetric algorithms only: a JWKS holds public keys, and `none` or HMAC must never verify. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'EdDSA'];

/**
 * Verifies an OIDC access token (a JWT) against the issuer's JWKS: signature, `iss`, `aud`, `exp`/`nbf`.
 * Scopes come from `scope` (space-separated, RFC 8693) or `scp` (a list); unknown scopes are ignored.
 */
export function createJwtVerifier(options: OidcOptions): (token: string) => Promise<Caller> {
  // Fetched on first use, cached, and fetched again when a token names a key id it has not seen (rotation).
  const keys = createRemoteJWKSet(new URL(options.jwksUrl), { timeoutDuration: 5_000 });
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: ALGORITHMS,
        clockTolerance: options.clockToleranceSeconds ?? 30,
      }));
    } catch (err) {
      throw jwtFailure(err, options);
    }
    return callerOf(payload, options.tenantClaim);
  };
}

function callerOf(payload: JWTPayload, tenantClaim: string): Caller {
  const tenant = payload[tenantClaim];
  // A claim names one tenant, never all: a wildcard there would let whoever controls claims at the issuer (a
  // self-service attribute, a mis-mapped group) widen a token to every tenant. Operators use an API token
  // with tenant "*" from PROJECTOR_API_TOKENS_FILE, which only the deployment can grant.
  if (tenant === ALL_TENANTS)
    throw invalidToken(
      `its "${tenantClaim}" claim is "${ALL_TENANTS}", and a JWT never grants every tenant; name one tenant in the claim, or give operators an API token with tenant "${ALL_TENANTS}" in PROJECTOR_API_TOKENS_FILE`,
    );
  if (typeof tenant !== 'string' || !TenantSchema.safeParse(tenant).success)
    throw invalidToken(
      `it has no valid "${tenantClaim}" claim (a tenant: letters, digits, "_" and "-"); ask the issuer to add it`,
    );
  const scope: unknown = payload['scope'];
  const scp: unknown = payload['scp'];
  const granted: unknown[] = [
    ...(typeof scope === 'string' ? scope.split(' ') : []),
    ...(Array.isArray(scp) ? (scp as unknown[]) : typeof scp === 'string' ? [scp] : []),
  ];
  const scopes = new Set<Scope>(SCOPES.filter((scope) => granted.includes(scope)));
  return { name: nameOf(payload), tenant, scopes, kind: 'jwt', issuer: payload.iss ?? '' };
}

/** The subject, else the OAuth client the token was issued to (a client-credentials token has no `sub`). */
function nameOf(payload: JWTPayload): string {
  for (const claim of ['sub', 'client_id', 'azp'])
    if (typeof payload[claim] === 'string' && payload[claim] !== '') return payload[claim];
  return 'jwt';
}

function jwtFailure(err: unknown, options: OidcOptions): AuthError {
  if (err instanceof errors.JWTExpired) return invalidToken('it has expired; get a new one from the issuer');
  if (err instanceof errors.JWTClaimValidationFailed)
    return invalidToken(
      `its "${err.claim}" claim fails the check (${err.reason}); this API accepts issuer ${options.issuer} and audience ${options.audience}`,
    );
  if (err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JWKSNoMatchingKey)
    return invalidToken(`its signature does not verify against the keys at ${options.jwksUrl}`);
  if (err instanceof errors.JWKSTimeout || !(err instanceof errors.JOSEError))
    return new AuthError(
      503,
      'auth_unavailable',
      `the issuer's keys at ${options.jwksUrl} could not be fetched (${(err as Error).message}); retry shortly`,
    );
  return invalidToken(`it is not a valid JWT (${err.message})`);
}
