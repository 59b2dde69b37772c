import type { ManagedProcess } from './managed-process';
import { spawnTsEntry } from './spawn-ts-entry';

/** A Dura service that runs as its own process (`services/<name>/src/main.ts`). */
export type DuraServiceName = 'planner' | 'tool-gateway' | 'projector' | 'worker';

/** What each service prints once it is ready. */
export const SERVICE_READY: Record<DuraServiceName, RegExp> = {
  planner: /planner started/,
  'tool-gateway': /tool gateway started/,
  projector: /projector api listening/,
  worker: /worker started/,
};

/**
 * Spawns one Dura service as its own OS process and waits until it says it is ready. A planner or a worker
 * runs inline scripted plans, as tests submit them; a test of the production default passes
 * DURA_INLINE_PLANS=false in `env`.
 */
export async function startDuraService(
  name: DuraServiceName,
  env: Record<string, string>,
): Promise<ManagedProcess> {
  const plans = name === 'planner' || name === 'worker';
  const proc = spawnTsEntry({
    name,
    // A worker is the planner and the gateway in one process (npm run worker).
    entry: `services/${name}/src/main.ts`,
    env: { LOG_LEVEL: 'info', ...(plans ? { DURA_INLINE_PLANS: 'true' } : {}), ...env },
  });
  await proc.waitForOutput(SERVICE_READY[name], 60_000);
  return proc;
}
