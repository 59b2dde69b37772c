import { z } from 'zod';
import { configFields, loadConfig } from '@dura/service-kit';

export const GatewayConfigSchema = z.object({
  NATS_URL: configFields.natsUrl.default('nats://127.0.0.1:4222'),
  DATABASE_URL: configFields.databaseUrl,
  GATEWAY_CONCURRENCY: configFields.positiveInt.default(32),
  GATEWAY_MAX_ATTEMPTS: configFields.positiveInt.default(3),
  GATEWAY_ACK_WAIT_MS: configFields.positiveInt.default(60_000),
  GATEWAY_LEASE_MARGIN_MS: configFields.positiveInt.default(30_000),
  RELAY_POLL_MS: configFields.positiveInt.default(250),
  DURA_STREAM_REPLICAS: configFields.replicas,
  DURA_DUPLICATE_WINDOW_MS: configFields.positiveInt.default(120_000),
  DURA_TOOLS_MODULES: z.string().optional(),
  /** Serves `/metrics` (Prometheus) and `/healthz` on this port; unset: no HTTP server. 0 picks a free port. */
  METRICS_PORT: configFields.port.optional(),
  LOG_LEVEL: configFields.logLevel,
  LOG_FORMAT: configFields.logFormat,
});
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

export function loadGatewayConfig(env?: Record<string, string | undefined>): GatewayConfig {
  return loadConfig('tool-gateway', GatewayConfigSchema, env);
}
