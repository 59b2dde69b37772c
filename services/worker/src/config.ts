import * as z from 'zod';
import { configFields, loadConfig } from '@dura/service-kit';
import { PlannerConfigSchema, type PlannerConfig } from '@dura/planner';
import { GatewayConfigSchema, type GatewayConfig } from '@dura/tool-gateway';

/**
 * A worker's drive holds a run's slot while the run's calls run in place, so it takes more runs at once than
 * a planner does (16) unless PLANNER_CONCURRENCY says otherwise.
 */
export const WORKER_DEFAULT_CONCURRENCY = 64;

/**
 * The planner's and the gateway's variables together (the ones both read have the same meaning and default),
 * with the worker's own default for PLANNER_CONCURRENCY.
 */
export const WorkerConfigSchema = z.object({
  ...PlannerConfigSchema.shape,
  ...GatewayConfigSchema.shape,
  PLANNER_CONCURRENCY: configFields.positiveInt
    .default(WORKER_DEFAULT_CONCURRENCY)
    .describe('Run messages the planner handles at once (a worker: 64, since calls run inside the drive).'),
});
export type WorkerConfig = z.infer<typeof WorkerConfigSchema>;

/** The whole configuration, and the planner's and the gateway's views of it. */
export interface WorkerSettings extends WorkerConfig {
  planner: PlannerConfig;
  gateway: GatewayConfig;
}

export function loadWorkerConfig(env?: Record<string, string | undefined>): WorkerSettings {
  const config = loadConfig('worker', WorkerConfigSchema, env);
  return {
    ...config,
    planner: pick(PlannerConfigSchema, config) as PlannerConfig,
    gateway: pick(GatewayConfigSchema, config) as GatewayConfig,
  };
}

function pick(schema: z.ZodObject, config: WorkerConfig): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(schema.shape).map((key) => [key, (config as Record<string, unknown>)[key]]),
  );
}
