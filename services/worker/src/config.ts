import * as z from 'zod';
import { configFields, loadConfig } from '@dura/service-kit';
import { PlannerConfigSchema, type PlannerConfig } from '@dura/planner';
import { GatewayConfigSchema, type GatewayConfig } from '@dura/tool-gateway';

/**
 * A worker's drive holds a run's slot while the run's calls run in place, so it takes 64 runs at once (as a
 * planner, whose drive holds it while a direct call runs) unless PLANNER_CONCURRENCY says otherwise.
 */
export const WORKER_DEFAULT_CONCURRENCY = 64;

/**
 * The planner's and the gateway's variables together (the ones both read have the same meaning and default),
 * with the worker's own default for PLANNER_CONCURRENCY.
 */
export const WorkerConfigSchema = z.object({
  // A worker's calls run in place: it hands none to a gateway (PLANNER_DIRECT_CALLS is not read).
  ...PlannerConfigSchema.omit({ PLANNER_DIRECT_CALLS: true }).shape,
  ...GatewayConfigSchema.shape,
  PLANNER_CONCURRENCY: configFields.positiveInt
    .default(WORKER_DEFAULT_CONCURRENCY)
    .describe('Run messages the planner handles at once (a worker: 64, since calls run inside the drive).'),
});
export type WorkerConfig = z.infer<typeof WorkerConfigSchema>;

/** The planner's and the gateway's views of a worker configuration: what `buildWorker` reads. */
export interface WorkerViews {
  planner: PlannerConfig;
  gateway: Omit<GatewayConfig, 'DATABASE_URL'>;
}

/** The whole configuration, and the planner's and the gateway's views of it. */
export interface WorkerSettings extends WorkerConfig, WorkerViews {
  gateway: GatewayConfig;
}

export function loadWorkerConfig(env?: Record<string, string | undefined>): WorkerSettings {
  const config = loadConfig('worker', WorkerConfigSchema, env);
  return {
    ...config,
    planner: plannerView(config),
    gateway: pick(GatewayConfigSchema, config) as GatewayConfig,
  };
}

/**
 * A worker's views of `env` in a process that opens the database itself (`dura dev`): the worker's
 * variables and defaults, DATABASE_URL not read. A bad value is a `ConfigError` naming `service`.
 */
export function loadEmbeddedWorkerConfig(
  service: string,
  env: Record<string, string | undefined>,
): WorkerViews {
  const schema = WorkerConfigSchema.omit({ DATABASE_URL: true });
  const config = loadConfig(service, schema, env);
  return {
    planner: plannerView(config),
    gateway: pick(GatewayConfigSchema.omit({ DATABASE_URL: true }), config) as WorkerViews['gateway'],
  };
}

/** The planner's view: its variables as the worker read them; no direct calls, the calls run in place. */
function plannerView(config: Record<string, unknown>): PlannerConfig {
  return { ...pick(PlannerConfigSchema, config), PLANNER_DIRECT_CALLS: false } as PlannerConfig;
}

function pick(schema: z.ZodObject, config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(schema.shape).map((key) => [key, config[key]]));
}
