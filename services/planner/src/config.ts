import { z } from 'zod';
import { configFields, loadConfig } from '@dura/service-kit';

export const PlannerConfigSchema = z.object({
  NATS_URL: configFields.natsUrl.default('nats://127.0.0.1:4222'),
  PLANNER_CONCURRENCY: configFields.positiveInt.default(16),
  PLANNER_ACK_WAIT_MS: configFields.positiveInt.default(60_000),
  PLANNER_SNAPSHOT_EVERY: configFields.positiveInt.default(100),
  DURA_STREAM_REPLICAS: configFields.replicas,
  DURA_DUPLICATE_WINDOW_MS: configFields.positiveInt.default(120_000),
  DURA_TOOLS_MODULES: z.string().optional(),
  /** Appends one JSON line per scripted-model call: how fault tests prove no recorded decision is asked again. */
  DURA_SCRIPTED_MODEL_LOG: z.string().optional(),
  /** Serves `/metrics` (Prometheus) and `/healthz` on this port; unset: no HTTP server. 0 picks a free port. */
  METRICS_PORT: configFields.port.optional(),
  LOG_LEVEL: configFields.logLevel,
  LOG_FORMAT: configFields.logFormat,
});
export type PlannerConfig = z.infer<typeof PlannerConfigSchema>;

export function loadPlannerConfig(env?: Record<string, string | undefined>): PlannerConfig {
  return loadConfig('planner', PlannerConfigSchema, env);
}
