import * as z from 'zod';
import { ConfigError, configFields, configShapes, loadConfig } from '@dura/service-kit';
import { DEFAULT_LINGER_MS } from './projector';

export const ProjectorConfigSchema = z.object({
  ...configShapes.nats,
  DATABASE_URL: configFields.databaseUrl.describe('The Postgres database the service keeps its tables in.'),
  PROJECTOR_HTTP_PORT: configFields.port.default(8080).describe('Port of the read API and `/healthz`.'),
  DURA_BIND_HOST: configFields.bindHost,
  PROJECTOR_BATCH_SIZE: configFields.positiveInt
    .default(500)
    .describe('Events the projector writes to Postgres per batch.'),
  PROJECTOR_LINGER_MS: configFields.nonNegativeInt
    .default(DEFAULT_LINGER_MS)
    .describe(
      'How long (ms) a batch that caught up with the stream waits for more events before it is written: events that trickle in share a transaction, and the read model trails the log by that much more. 0 writes each at once.',
    ),
  ...configShapes.streams,
  ...configShapes.shutdown,
  PROJECTOR_AUTH_REQUIRED: configFields.flag
    .describe(
      '`true`: refuse to start unless API tokens or OIDC are configured. `false` with neither: the API is open to anyone who can reach it (local development; a warning is logged at start).',
    ),
  PROJECTOR_API_TOKENS_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      'JSON file of API bearer tokens: `[{"name", "sha256" (hex of the token) or "token", "tenant" (or "*" for all), "scopes": ["read", "signal", "cancel"]}]`.',
    ),
  PROJECTOR_OIDC_ISSUER: z
    .string()
    .url()
    .optional()
    .describe('Accept OIDC JWT bearer tokens from this issuer (`iss`); needs the JWKS URL and audience too.'),
  PROJECTOR_OIDC_JWKS_URL: z
    .string()
    .url()
    .optional()
    .describe("The issuer's JWKS URL: the keys JWTs must be signed with."),
  PROJECTOR_OIDC_AUDIENCE: z.string().min(1).optional().describe('The `aud` a JWT must name to be accepted.'),
  PROJECTOR_OIDC_TENANT_CLAIM: z
    .string()
    .min(1)
    .default('dura_tenant')
    .describe(
      "The JWT claim naming the caller's one tenant; a JWT without it, or with `*`, is refused (operators: a `*` API token).",
    ),
  PROJECTOR_CORS_ORIGINS: z
    .string()
    .optional()
    .describe(
      'Comma-separated browser origins allowed to call the API (e.g. `https://ops.example.com`); unset: no CORS.',
    ),
  PROJECTOR_SSE_MAX_PER_TOKEN: configFields.positiveInt
    .default(20)
    .describe(
      'Live run streams (`GET /runs/:id/stream`) one credential (its kind, issuer, tenant and name) may hold open at once (without credentials: one address); more answer 429.',
    ),
  PROJECTOR_SSE_MAX_TOTAL: configFields.positiveInt
    .default(1000)
    .describe('Live run streams the projector holds open at once, all callers together; more answer 429.'),
  PROJECTOR_CHAT_DOUBLE_TEXTING: z
    .enum(['reject', 'interrupt'])
    .default('reject')
    .describe(
      "A chat message (`POST /chat`) sent while the chat's turn still runs: `reject` answers 409 `turn_in_progress`; `interrupt` cancels the running turn (the caller needs scope `cancel`) and starts the new one.",
    ),
  PROJECTOR_CONSOLE_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Directory of the built web console served at `/ui/` (default: `services/console/dist` of the installation).',
    ),
  PROJECTOR_CONSOLE_TRACES_URL: z
    .string()
    .min(1)
    .refine((value) => /^https?:\/\/[^\s]+$/.test(value) && value.includes('{traceId}'), {
      message: 'must be an http(s) URL with {traceId} in it, e.g. http://localhost:16686/trace/{traceId}',
    })
    .optional()
    .describe(
      "Link to a run's trace in the tracing UI, with `{traceId}` where the trace id goes (e.g. `http://localhost:16686/trace/{traceId}`); unset: no link.",
    ),
  ...configShapes.log,
});
export type ProjectorConfig = z.infer<typeof ProjectorConfigSchema>;

const OIDC_VARIABLES = [
  'PROJECTOR_OIDC_ISSUER',
  'PROJECTOR_OIDC_JWKS_URL',
  'PROJECTOR_OIDC_AUDIENCE',
] as const;

export function loadProjectorConfig(env?: Record<string, string | undefined>): ProjectorConfig {
  const config = loadConfig('projector', ProjectorConfigSchema, env);
  // Half an OIDC setup would accept tokens from any issuer or audience: refuse it rather than guess.
  const oidcSet = OIDC_VARIABLES.filter((name) => config[name] !== undefined);
  if (oidcSet.length > 0 && oidcSet.length < OIDC_VARIABLES.length)
    throw new ConfigError('projector', [
      `OIDC needs all of ${OIDC_VARIABLES.join(', ')}; missing ${OIDC_VARIABLES.filter((n) => !oidcSet.includes(n)).join(', ')}`,
    ]);
  if (config.PROJECTOR_AUTH_REQUIRED && !config.PROJECTOR_API_TOKENS_FILE && oidcSet.length === 0)
    throw new ConfigError('projector', [
      'PROJECTOR_AUTH_REQUIRED: is true but no credentials are configured; set PROJECTOR_API_TOKENS_FILE or the PROJECTOR_OIDC_* variables',
    ]);
  return config;
}
