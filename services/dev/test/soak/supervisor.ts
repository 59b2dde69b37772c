import { setTimeout as sleep } from 'node:timers/promises';
import {
  SERVICE_READY,
  spawnTsEntry,
  type DuraServiceName,
  type ManagedProcess,
  type ProcessExit,
} from '@dura/testing';

export type ServiceName = DuraServiceName;

const ENTRY: Record<ServiceName, string> = {
  planner: 'services/planner/src/main.ts',
  'tool-gateway': 'services/tool-gateway/src/main.ts',
  projector: 'services/projector/src/main.ts',
  worker: 'services/worker/src/main.ts',
};
const RESPAWN_PAUSE_MS = 250;
const OUTPUT_KEPT = 6_000;

/** How one process of a slot ended. */
export interface SlotExit extends ProcessExit {
  /** True when the test killed it on purpose. */
  killed: boolean;
  /** Whether it had said it was ready before it ended. */
  wasReady: boolean;
  at: number;
  /** The end of its output. */
  tail: string;
}

/**
 * postgres.js 3.4.9 throws from a setImmediate when a query is written to a connection whose socket has just
 * closed (porsager/postgres#1066, #1154, #1208): a transaction open while Postgres restarts takes the whole
 * process down. Until the driver is patched, tests tell this crash apart from any other.
 */
export function isKnownDriverCrash(exit: SlotExit): boolean {
  return /at Immediate\.nextWrite \([^)]*postgres\/(cjs\/)?src\/connection\.js/.test(exit.tail);
}

/** Ended on its own after it was ready, for a reason other than the known driver crash. */
export function isUnexplainedCrash(exit: SlotExit): boolean {
  return !exit.killed && exit.wasReady && !isKnownDriverCrash(exit);
}

/**
 * One replica of a service kept alive the way an orchestrator would: whenever its process ends (killed by
 * the test, or failing to start while the broker or the database is down), a new one is started.
 */
export interface ServiceSlot {
  readonly name: ServiceName;
  readonly label: string;
  /** The current process, if one is running. */
  current(): ManagedProcess | undefined;
  /** SIGKILLs the current process (the slot starts a new one); false when nothing was running. */
  kill(): Promise<boolean>;
  /** Resolves once the current process says it is ready. */
  ready(timeoutMs?: number): Promise<void>;
  exits(): readonly SlotExit[];
  /** Output tails of the current and the last few ended processes, newest last. */
  outputTail(): string;
  /** Stops supervising and SIGTERMs the current process. */
  stop(): Promise<void>;
}

export function superviseService(
  name: ServiceName,
  label: string,
  env: () => Record<string, string>,
): ServiceSlot {
  let proc: ManagedProcess | undefined;
  let isReady = false;
  let stopping = false;
  let killing = false;
  const exits: SlotExit[] = [];
  const tails: string[] = [];
  const readyWaiters = new Set<() => void>();

  async function supervise(): Promise<void> {
    while (!stopping) {
      const started = spawnTsEntry({
        name: label,
        entry: ENTRY[name],
        // The soak submits inline scripted plans, off by default in the planner service.
        env: {
          LOG_LEVEL: 'info',
          ...(name === 'planner' || name === 'worker' ? { DURA_INLINE_PLANS: 'true' } : {}),
          ...env(),
        },
      });
      proc = started;
      isReady = false;
      started.waitForOutput(SERVICE_READY[name], 120_000).then(
        () => {
          if (proc !== started) return;
          isReady = true;
          for (const resolve of readyWaiters) resolve();
          readyWaiters.clear();
        },
        () => undefined,
      );
      const exit = await started.exited;
      const tail = started.output().slice(-OUTPUT_KEPT);
      exits.push({ ...exit, killed: killing, wasReady: isReady, at: Date.now(), tail });
      killing = false;
      tails.push(`--- ${label} pid ${started.pid} ended (${exit.signal ?? exit.code})\n${tail}`);
      if (tails.length > 3) tails.shift();
      proc = undefined;
      isReady = false;
      if (!stopping) await sleep(RESPAWN_PAUSE_MS);
    }
  }
  const loop = supervise();

  const outputTail = (): string =>
    [...tails, proc ? `--- ${label} pid ${proc.pid} (running)\n${proc.output().slice(-OUTPUT_KEPT)}` : '']
      .filter(Boolean)
      .join('\n');

  return {
    name,
    label,
    current: () => proc,
    async kill() {
      const target = proc;
      if (!target) return false;
      killing = true;
      await target.kill('SIGKILL');
      return true;
    },
    ready(timeoutMs = 120_000) {
      if (isReady) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          readyWaiters.delete(done);
          reject(new Error(`${label} was not ready within ${timeoutMs} ms:\n${outputTail()}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        readyWaiters.add(done);
      });
    },
    exits: () => exits,
    outputTail,
    async stop() {
      stopping = true;
      await proc?.kill('SIGTERM');
      await loop;
    },
  };
}
