import * as z from 'zod';
import {
  CONFIG_ERROR_CODE,
  DuraError,
  NATS_SECURITY_FIELDS,
  resolveNatsSecurity,
  type NatsSecurity,
  type NatsSecuritySettings,
} from '@dura/contracts';
import { DEFAULT_BIND_HOST } from './http-server';

/** Bad configuration: the process cannot start. Services exit with code 2 on it. */
export class ConfigError extends DuraError {
  readonly problems: string[];

  constructor(service: string, problems: string[]) {
    super(
      CONFIG_ERROR_CODE,
      `${service}: invalid configuration\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.problems = problems;
  }
}

export const CONFIG_EXIT_CODE = 2;

/**
 * Reads one service's configuration from environment variables. Schema keys are the variable names,
 * so every error names the variable to fix.
 */
export function loadConfig<S extends z.ZodObject>(
  service: string,
  schema: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<S> {
  const picked = Object.fromEntries(
    Object.keys(schema.shape).map((key) => [key, env[key] === '' ? undefined : env[key]]),
  );
  const parsed = schema.safeParse(picked);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    service,
    parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? '(config)');
      const value = env[name];
      // '' was parsed as unset; quoting it back would contradict the "received undefined" in the issue.
      return `${name}: ${issue.message}${value === undefined || value === '' ? ' (not set)' : ` (got ${JSON.stringify(value)})`}`;
    }),
  );
}

/** The secrets keys, read by the planner and every gateway (they must agree). */
export const secretsConfigShape = {
  DURA_SECRETS_KEY: z
    .string()
    .optional()
    .describe(
      'Key that seals secret tool fields, `<kid>:<base64 of 32 bytes>`; required when a tool declares secrets. Same on planner and gateways.',
    ),
  DURA_SECRETS_PREVIOUS_KEYS: z
    .string()
    .optional()
    .describe('Older secrets keys (comma-separated `<kid>:<base64>`): they only open, for key rotation.'),
};

/** Shared pieces of the per-service schemas. */
export const configFields = {
  natsUrl: z.string().regex(/^(nats|tls|ws|wss):\/\/.+/, 'must be a NATS URL such as nats://127.0.0.1:4222'),
  databaseUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\/.+/, 'must be a Postgres URL such as postgres://user@host:5432/db'),
  port: z.coerce.number().int().min(0).max(65535),
  positiveInt: z.coerce.number().int().positive(),
  nonNegativeInt: z.coerce.number().int().min(0),
  logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  logFormat: z.enum(['json', 'pretty']).default('json'),
  replicas: z.coerce.number().int().min(1).max(5).default(1),
  /** A switch: `true` or `false` (off when unset), read as a boolean. */
  flag: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /**
   * `DURA_BIND_HOST`: where a service's HTTP servers listen. Loopback unless told otherwise, so a process started
   * on a workstation or a VM never serves /metrics or the API to the network by accident; images set 0.0.0.0.
   */
  bindHost: z
    .string()
    .regex(/^[A-Za-z0-9.:-]+$/, 'must be an IP address or host name, e.g. 127.0.0.1 or 0.0.0.0')
    .default(DEFAULT_BIND_HOST)
    .describe(
      'Address the HTTP servers (API, `/metrics`, `/healthz`, `/readyz`) listen on: `127.0.0.1` (this machine only) or `0.0.0.0` (every interface; the images and manifests set it).',
    ),
};

/** Where a service finds NATS and how it proves who it is: the first variables of every service's schema. */
const natsConfigShape = {
  NATS_URL: configFields.natsUrl.default('nats://127.0.0.1:4222').describe('The NATS server to connect to.'),
  ...NATS_SECURITY_FIELDS,
};

/** How the streams and buckets a service creates are made (every service must agree). */
const streamConfigShape = {
  DURA_STREAM_REPLICAS: configFields.replicas.describe(
    'Replicas (1 to 5) of every stream and bucket the services create; 3 in production.',
  ),
  DURA_DUPLICATE_WINDOW_MS: configFields.positiveInt
    .default(120_000)
    .describe('JetStream duplicate window: a message id published again within it is dropped.'),
};

/** How long a service may take to stop after SIGTERM: in-flight work finishes or is handed back. */
const shutdownConfigShape = {
  SHUTDOWN_GRACE_MS: configFields.positiveInt
    .default(25_000)
    .describe('After SIGTERM: time to finish or hand back work, flush the outbox and telemetry, and exit 0.'),
};

/** How a service logs: the last variables of every service's schema. */
const logConfigShape = {
  LOG_LEVEL: configFields.logLevel.describe('`debug`, `info`, `warn` or `error`.'),
  LOG_FORMAT: configFields.logFormat.describe('`json` (one object per line) or `pretty`.'),
};

/**
 * The closing variables of a service run by `runService` with a metrics server (the planner, the gateway):
 * `/metrics` and health on `METRICS_PORT`, where it listens, its shutdown grace and its logs.
 */
const processConfigShape = {
  /** Serves `/metrics` (Prometheus) and `/healthz` on this port; unset: no HTTP server. 0 picks a free port. */
  METRICS_PORT: configFields.port
    .optional()
    .describe(
      'Serves `/metrics`, `/healthz` and `/readyz` on this port (0: a free port); unset: no metrics server.',
    ),
  DURA_BIND_HOST: configFields.bindHost,
  ...shutdownConfigShape,
  ...logConfigShape,
};

/** Shared groups of variables, spread into the per-service schemas where each service lists them. */
export const configShapes = {
  nats: natsConfigShape,
  streams: streamConfigShape,
  shutdown: shutdownConfigShape,
  log: logConfigShape,
  process: processConfigShape,
};

/**
 * The NATS credentials and TLS settings of a loaded config (its schema spreads `NATS_SECURITY_FIELDS`),
 * checked as a whole: at most one authentication method, a certificate with its key.
 */
export function loadNatsSecurity(service: string, config: NatsSecuritySettings): NatsSecurity {
  const resolved = resolveNatsSecurity(config);
  if (!resolved.ok) throw new ConfigError(service, resolved.problems);
  return resolved.security;
}
