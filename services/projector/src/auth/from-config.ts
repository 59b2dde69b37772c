import { readFile } from 'node:fs/promises';
import { ConfigError, type Logger } from '@dura/service-kit';
import type { ProjectorConfig } from '../config';
import { parseTokenFile } from './api-tokens';
import { createAuthenticator, type Authenticator } from './authenticator';
import { corsPolicy, type CorsPolicy } from './cors';
import { createJwtVerifier } from './jwt-verifier';

/** The API's authenticator and CORS policy from the projector's configuration; warns when the API is open. */
export async function apiSecurityFromConfig(
  config: ProjectorConfig,
  log: Logger,
): Promise<{ auth: Authenticator; cors: CorsPolicy }> {
  try {
    return await build(config, log);
  } catch (err) {
    // Exit as any bad configuration does (code 2), with the reason.
    throw new ConfigError('projector', [(err as Error).message]);
  }
}

async function build(
  config: ProjectorConfig,
  log: Logger,
): Promise<{ auth: Authenticator; cors: CorsPolicy }> {
  const file = config.PROJECTOR_API_TOKENS_FILE;
  const tokens = file ? parseTokenFile(await readTokenFile(file), file) : undefined;
  const { PROJECTOR_OIDC_ISSUER: issuer, PROJECTOR_OIDC_JWKS_URL: jwksUrl } = config;
  const audience = config.PROJECTOR_OIDC_AUDIENCE;
  const verifyJwt =
    issuer && jwksUrl && audience
      ? createJwtVerifier({ issuer, jwksUrl, audience, tenantClaim: config.PROJECTOR_OIDC_TENANT_CLAIM })
      : undefined;
  const auth = createAuthenticator({
    ...(tokens ? { tokens } : {}),
    ...(verifyJwt ? { verifyJwt } : {}),
  });
  const cors = corsPolicy(config.PROJECTOR_CORS_ORIGINS);
  if (!auth.enabled)
    log.warn(
      "the projector API is open: no PROJECTOR_API_TOKENS_FILE or PROJECTOR_OIDC_* is set, so anyone who can reach its port reads every tenant's runs and can signal and cancel them; fine for local development only (PROJECTOR_AUTH_REQUIRED=true refuses to start like this)",
    );
  else
    log.info('projector api authentication on', {
      apiTokens: tokens?.size ?? 0,
      oidcIssuer: issuer ?? null,
      corsOrigins: [...cors.origins],
    });
  return { auth, cors };
}

async function readTokenFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(
      `PROJECTOR_API_TOKENS_FILE: cannot read ${path} (${(err as Error).message}); mount the tokens file there or unset the variable`,
    );
  }
}
