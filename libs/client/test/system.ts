import { fileURLToPath } from 'node:url';
import { freePort, spawnTsEntry, type ManagedProcess } from '@dura/testing';

const SLOW_TOOLS = fileURLToPath(new URL('./fixtures/slow-tools.ts', import.meta.url));
const READY = {
  planner: /planner started/,
  'tool-gateway': /tool gateway started/,
  projector: /projector api listening/,
} as const;

export interface DuraSystem {
  apiUrl: string;
  stop(): Promise<void>;
}

/** Planner, tool-gateway and projector, each its own OS process, on the spec's NATS and database. */
export async function startSystem(natsUrl: string, databaseUrl: string): Promise<DuraSystem> {
  const port = await freePort();
  const env = {
    LOG_LEVEL: 'info',
    NATS_URL: natsUrl,
    DATABASE_URL: databaseUrl,
    PROJECTOR_HTTP_PORT: String(port),
    DURA_TOOLS_MODULES: SLOW_TOOLS,
    // The tests submit inline scripted plans, off by default in the planner service.
    DURA_INLINE_PLANS: 'true',
  };
  const processes: ManagedProcess[] = [];
  const stop = async () => {
    await Promise.allSettled(processes.map((proc) => proc.kill('SIGTERM')));
  };
  try {
    for (const name of ['planner', 'tool-gateway', 'projector'] as const) {
      const proc = spawnTsEntry({ name, entry: `services/${name}/src/main.ts`, env });
      processes.push(proc);
      await proc.waitForOutput(READY[name], 60_000);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { apiUrl: `http://127.0.0.1:${port}`, stop };
}
