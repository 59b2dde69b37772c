import { z } from 'zod';
import { configFields, loadConfig } from '@dura/service-kit';

export const ProjectorConfigSchema = z.object({
  NATS_URL: configFields.natsUrl.default('nats://127.0.0.1:4222'),
  DATABASE_URL: configFields.databaseUrl,
  PROJECTOR_HTTP_PORT: configFields.port.default(8080),
  PROJECTOR_BATCH_SIZE: configFields.positiveInt.default(500),
  DURA_STREAM_REPLICAS: configFields.replicas,
  DURA_DUPLICATE_WINDOW_MS: configFields.positiveInt.default(120_000),
  LOG_LEVEL: configFields.logLevel,
  LOG_FORMAT: configFields.logFormat,
});
export type ProjectorConfig = z.infer<typeof ProjectorConfigSchema>;

export function loadProjectorConfig(env?: Record<string, string | undefined>): ProjectorConfig {
  return loadConfig('projector', ProjectorConfigSchema, env);
}
