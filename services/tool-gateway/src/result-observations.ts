import { ContractViolation, type JsonValue, type ToolTask } from '@dura/contracts';
import { offloadIfLarge, type PayloadStore } from '@dura/payloads';
import type { EffectRow } from './db/schema';
import { completedEvent, failedEvent } from './observations';

/**
 * The payload side of a call's observations: large results go to the object store and the event keeps a
 * reference; oversized arguments come back from it before the tool sees them.
 */
export function createResultObservations(payloads: PayloadStore, thresholdBytes: number) {
  /**
   * The observation of a result: inline, or, over the threshold, a reference to the object store. The
   * object is content-addressed, so every path that builds this observation (a repeat, a reconcile) agrees.
   */
  async function completed(
    task: ToolTask,
    result: JsonValue,
    attempt: number,
    durationMs: number,
    now: Date,
  ) {
    const offloaded = await offloadIfLarge(result, thresholdBytes, (bytes) => payloads.put(bytes));
    return 'ref' in offloaded
      ? completedEvent(task, null, attempt, durationMs, now, offloaded.ref)
      : completedEvent(task, result, attempt, durationMs, now);
  }

  /** Oversized arguments travel as a reference; fetched (hash-checked) before the tool sees them. */
  async function withArgs(task: ToolTask): Promise<ToolTask> {
    if (!task.argsRef) return task;
    const args = await payloads.getJson(task.argsRef);
    if (args === null || typeof args !== 'object' || Array.isArray(args))
      throw new ContractViolation(`the arguments stored at ${task.argsRef.uri} are not a JSON object`);
    return { ...task, args };
  }

  /** The observation of an outcome the ledger recorded before (a repeated call). */
  async function recorded(task: ToolTask, row: EffectRow, now: Date) {
    if (row.status === 'succeeded')
      return completed(task, row.result as JsonValue, row.attempts, row.durationMs ?? 0, now);
    return failedEvent(task, row.error as { code: string; message: string }, row.attempts, false, now);
  }

  return { completed, withArgs, recorded, storeBytes: (bytes: Uint8Array) => payloads.put(bytes) };
}

export type ResultObservations = ReturnType<typeof createResultObservations>;
