import { STREAMS, runSubject } from '@dura/contracts';
import { createDuraClient } from '@dura/client';
import type { Cluster } from './cluster';

/** Tools of the witness module the runs use: one settled by a status look-up, one re-run by key after a crash. */
export const SOAK_TOOLS = ['pay.checked', 'pay.charge'] as const;

export interface SoakRequest {
  runId: string;
  agent: {
    kind: 'scripted';
    steps: { tool: (typeof SOAK_TOOLS)[number]; args: { amount: number; delayMs: number } }[];
  };
}

/**
 * A run of `steps` charges alternating the two tools. The witness holds each answer back `delayMs`, so at any
 * moment calls are in flight: a kill lands after the effect and before its outcome is recorded.
 */
export function chargePlan(runId: string, steps: number, delayMs: number): SoakRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: Array.from({ length: steps }, (_, i) => ({
        tool: SOAK_TOOLS[i % SOAK_TOOLS.length] ?? 'pay.checked',
        args: { amount: (i + 1) * 100, delayMs },
      })),
    },
  };
}

/** Submits through the client SDK, retrying while the broker is away (the run id makes a retry a duplicate). */
export async function submitRun(cluster: Cluster, request: SoakRequest, timeoutMs = 60_000): Promise<void> {
  const client = createDuraClient(cluster);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await client.submitRun(request);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

const TERMINAL = new Set(['run_completed', 'run_failed', 'run_cancelled', 'run_rejected']);

/** The type of the last event on the run's log (one direct read), or undefined when it has none yet. */
export async function lastEventType(cluster: Cluster, runId: string): Promise<string | undefined> {
  try {
    const msg = await cluster.jsm.streams.getMessage(STREAMS.runs, { last_by_subj: runSubject(runId) });
    return msg ? (msg.json<{ type: string }>().type ?? undefined) : undefined;
  } catch {
    return undefined;
  }
}

/** Resolves with the runs not yet ended when every run ended or `timeoutMs` passed (an empty list: all ended). */
export async function waitForRunsToEnd(
  cluster: Cluster,
  runIds: readonly string[],
  timeoutMs: number,
  onProgress?: (ended: number) => void,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let open = [...runIds];
  while (open.length > 0 && Date.now() < deadline) {
    const types = await Promise.all(open.map((runId) => lastEventType(cluster, runId)));
    open = open.filter((_, i) => !TERMINAL.has(types[i] ?? ''));
    onProgress?.(runIds.length - open.length);
    if (open.length > 0) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return open;
}
