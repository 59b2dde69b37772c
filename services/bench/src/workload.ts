import { createDuraClient, type SubmitRunInput } from '@dura/client';
import { SUBJECTS, type JsonObject } from '@dura/contracts';
import { EVENT_TYPE_HEADER } from '@dura/event-store';
import type { Deployment } from './deployment';

const ENDED = new Set(['run_completed', 'run_failed', 'run_cancelled', 'run_rejected']);

/** A scripted run of `steps` calls of the no-op `echo` tool, each passing on the previous step's value. */
export function echoRequest(runId: string, steps: number) {
  return {
    runId,
    agent: {
      kind: 'scripted' as const,
      steps: Array.from({ length: steps }, (_, i) => {
        const args: JsonObject = i === 0 ? { step: 1 } : { step: i + 1, previous: `$steps.${i}.step` };
        return { tool: 'echo', args };
      }),
    },
  };
}

export interface WorkloadResult {
  runIds: string[];
  /** Client-observed submit → end event seen, ms, per run. */
  clientWallMs: number[];
}

/**
 * Submits `runs` runs keeping `inFlight` unfinished at a time, and resolves when all ended: each is `request`'s
 * answer for its id, by default `steps` echo steps. Ends are seen on a plain subscription to the run subjects
 * (JetStream publishes reach it too); runs the workload did not submit (child runs) are not waited for.
 */
export async function runWorkload(
  deployment: Deployment,
  opts: {
    prefix: string;
    runs: number;
    steps: number;
    inFlight: number;
    timeoutMs: number;
    request?: (runId: string) => SubmitRunInput;
  },
  onProgress?: (ended: number) => void,
): Promise<WorkloadResult> {
  const client = createDuraClient(deployment);
  const waiting = new Map<string, () => void>();
  const sub = deployment.nc.subscribe(SUBJECTS.allRuns, {
    callback: (_err, msg) => {
      const type = msg.headers?.get(EVENT_TYPE_HEADER) ?? '';
      if (!ENDED.has(type)) return;
      const runId = msg.subject.slice(SUBJECTS.runPrefix.length + 1);
      waiting.get(runId)?.();
    },
  });
  await deployment.nc.flush();
  const runIds = Array.from(
    { length: opts.runs },
    (_, i) => `${opts.prefix}-${String(i + 1).padStart(5, '0')}`,
  );
  const clientWallMs: number[] = [];
  let next = 0;
  let ended = 0;
  const deadline = Date.now() + opts.timeoutMs;
  async function lane(): Promise<void> {
    while (next < runIds.length) {
      const runId = runIds[next++] as string;
      const done = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`run ${runId} did not end within the scenario's ${opts.timeoutMs} ms`)),
          Math.max(1, deadline - Date.now()),
        );
        waiting.set(runId, () => {
          clearTimeout(timer);
          resolve();
        });
      });
      const began = performance.now();
      await client.submitRun(opts.request?.(runId) ?? echoRequest(runId, opts.steps));
      await done;
      clientWallMs.push(performance.now() - began);
      waiting.delete(runId);
      ended += 1;
      onProgress?.(ended);
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(opts.inFlight, runIds.length) }, () => lane()));
  } finally {
    sub.unsubscribe();
  }
  return { runIds, clientWallMs };
}
