import { fileURLToPath } from 'node:url';
import { freePort, runTsEntry, spawnTsEntry, type ManagedProcess, type TsEntryResult } from '@dura/testing';

export const SLOW_TOOLS = fileURLToPath(new URL('./fixtures/slow-tools.ts', import.meta.url));

/** Spawns one Dura service as its own OS process and waits until it says it is ready. */
export async function startService(
  name: 'planner' | 'tool-gateway' | 'projector',
  env: Record<string, string>,
): Promise<ManagedProcess> {
  const ready = {
    planner: /planner started/,
    'tool-gateway': /tool gateway started/,
    projector: /projector api listening/,
  }[name];
  const proc = spawnTsEntry({
    name,
    entry: `services/${name}/src/main.ts`,
    // Tests run inline scripted plans; a test of the production default passes DURA_INLINE_PLANS=false.
    env: { LOG_LEVEL: 'info', ...(name === 'planner' ? { DURA_INLINE_PLANS: 'true' } : {}), ...env },
  });
  await proc.waitForOutput(ready, 60_000);
  return proc;
}

export interface DuraSystem {
  natsUrl: string;
  apiUrl: string;
  stop(): Promise<void>;
}

/** Planner, tool-gateway and projector as separate processes on the spec's NATS and database. */
export async function startSystem(natsUrl: string, databaseUrl: string): Promise<DuraSystem> {
  const port = await freePort();
  const env = {
    NATS_URL: natsUrl,
    DATABASE_URL: databaseUrl,
    PROJECTOR_HTTP_PORT: String(port),
    DURA_TOOLS_MODULES: SLOW_TOOLS,
  };
  const processes: ManagedProcess[] = [];
  const stop = async () => {
    await Promise.allSettled(processes.map((proc) => proc.kill('SIGTERM')));
  };
  try {
    for (const name of ['planner', 'tool-gateway', 'projector'] as const)
      processes.push(await startService(name, env));
  } catch (err) {
    await stop();
    throw err;
  }
  return { natsUrl, apiUrl: `http://127.0.0.1:${port}`, stop };
}

export type CliResult = TsEntryResult;

/** Runs `dura <args>` as a real child process and waits for it to exit. */
export async function dura(
  args: string[],
  options: { env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<CliResult> {
  return runTsEntry({
    name: `dura ${args[0] ?? ''}`,
    entry: 'services/cli/src/main.ts',
    args,
    // The user's environment must not leak in: each test says where NATS and the API are.
    env: { NATS_URL: undefined, DURA_API_URL: undefined, ...options.env },
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
}

/** Starts `dura <args>` and returns the process (for commands that follow a run). */
dura.spawn = (args: string[], env: Record<string, string | undefined> = {}): ManagedProcess =>
  spawnTsEntry({
    name: `dura ${args[0] ?? ''}`,
    entry: 'services/cli/src/main.ts',
    args,
    // The user's environment must not leak in: each test says where NATS and the API are.
    env: { NATS_URL: undefined, DURA_API_URL: undefined, ...env },
  });

/** JSON lines of a --json stream. */
export function jsonLines(output: string): unknown[] {
  return output
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as unknown);
}
