import { invalidToken, missingCredential, OPEN_CALLER, type Caller } from './caller';
import { sha256Hex } from './api-tokens';

/** Turns an `Authorization` header into a caller, or throws an `AuthError`. */
export interface Authenticator {
  /** False when no credential is configured: every request is `OPEN_CALLER`. */
  readonly enabled: boolean;
  authenticate(authorization: string | undefined): Promise<Caller>;
}

/** A compact JWS: three base64url parts. Anything else is not worth a signature check. */
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]+$/;

export function createAuthenticator(options: {
  /** Callers by the SHA-256 of their token (`parseTokenFile`). */
  tokens?: ReadonlyMap<string, Caller>;
  verifyJwt?: (token: string) => Promise<Caller>;
}): Authenticator {
  const { tokens, verifyJwt } = options;
  const enabled = (tokens !== undefined && tokens.size > 0) || verifyJwt !== undefined;
  return {
    enabled,
    async authenticate(authorization) {
      if (!enabled) return OPEN_CALLER;
      if (authorization === undefined || authorization.trim() === '') throw missingCredential();
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (!match?.[1]) throw invalidToken('the Authorization header must be "Bearer <token>"');
      const token = match[1];
      const known = tokens?.get(sha256Hex(token));
      if (known) return known;
      if (verifyJwt && JWT_SHAPE.test(token)) return verifyJwt(token);
      throw invalidToken('it is not one of the configured API tokens');
    },
  };
}
