import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  freePort,
  repoRoot,
  spawnManaged,
  startDuraService,
  type ManagedProcess,
  type TsEntryResult,
} from '@dura/testing';

export const SLOW_TOOLS = fileURLToPath(new URL('./fixtures/slow-tools.ts', import.meta.url));

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
      processes.push(await startDuraService(name, env));
  } catch (err) {
    await stop();
    throw err;
  }
  return { natsUrl, apiUrl: `http://127.0.0.1:${port}`, stop };
}

export type CliResult = TsEntryResult;

/** The package's bin, as `npx dura` runs it: the built CLI in services/cli/dist. */
const DURA_BIN = fileURLToPath(new URL('../bin/dura.mjs', import.meta.url));

/** Starts `dura <args>` and returns the process (for commands that follow a run). */
function spawnDura(args: string[], env: Record<string, string | undefined>): ManagedProcess {
  return spawnManaged({
    name: `dura ${args[0] ?? ''}`,
    command: process.execPath,
    args: [DURA_BIN, ...args],
    cwd: repoRoot(),
    // The user's environment must not leak in: each test says where NATS and the API are.
    env: { NATS_URL: undefined, DURA_API_URL: undefined, ...env },
  });
}

/** Runs `dura <args>` as a real child process and waits for it to exit (killed, and failing, after the timeout). */
export async function dura(
  args: string[],
  options: { env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<CliResult> {
  const proc = spawnDura(args, options.env ?? {});
  const timeoutMs = options.timeoutMs ?? 60_000;
  const end = await Promise.race([proc.closed, sleep(timeoutMs, 'timeout' as const, { ref: false })]);
  if (end === 'timeout') {
    await proc.kill('SIGKILL');
    throw new Error(`dura ${args.join(' ')} did not exit within ${timeoutMs} ms. Output:\n${proc.output()}`);
  }
  return { code: end.code, output: proc.output() };
}

dura.spawn = (args: string[], env: Record<string, string | undefined> = {}): ManagedProcess =>
  spawnDura(args, env);

/** JSON lines of a --json stream. */
export function jsonLines(output: string): unknown[] {
  return output
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as unknown);
}
