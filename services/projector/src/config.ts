import { z } from 'zod';
import { NATS_SECURITY_FIELDS } from '@dura/contracts';
import { configFields, loadConfig } from '@dura/service-kit';

export const ProjectorConfigSchema = z.object({
  NATS_URL: configFields.natsUrl.default('nats://127.0.0.1:4222').describe('The NATS server to connect to.'),
  ...NATS_SECURITY_FIELDS,
  DATABASE_URL: configFields.databaseUrl.describe('The Postgres database the service keeps its tables in.'),
  PROJECTOR_HTTP_PORT: configFields.port.default(8080).describe('Port of the read API and `/healthz`.'),
  PROJECTOR_BATCH_SIZE: configFields.positiveInt
    .default(500)
    .describe('Events the projector writes to Postgres per batch.'),
  DURA_STREAM_REPLICAS: configFields.replicas.describe(
    'Replicas (1 to 5) of every stream and bucket the services create; 3 in production.',
  ),
  DURA_DUPLICATE_WINDOW_MS: configFields.positiveInt
    .default(120_000)
    .describe('JetStream duplicate window: a message id published again within it is dropped.'),
  /** How long the process may take to stop after SIGTERM: in-flight work finishes or is handed back. */
  SHUTDOWN_GRACE_MS: configFields.positiveInt
    .default(25_000)
    .describe('After SIGTERM: time to finish or hand back work, flush the outbox and telemetry, and exit 0.'),
  LOG_LEVEL: configFields.logLevel.describe('`debug`, `info`, `warn` or `error`.'),
  LOG_FORMAT: configFields.logFormat.describe('`json` (one object per line) or `pretty`.'),
});
export type ProjectorConfig = z.infer<typeof ProjectorConfigSchema>;

export function loadProjectorConfig(env?: Record<string, string | undefined>): ProjectorConfig {
  return loadConfig('projector', ProjectorConfigSchema, env);
}
