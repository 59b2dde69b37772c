import { DuraError } from '@dura/contracts';
import type { EventStore } from '@dura/event-store';

/** Events only a deciding planner appends: one past the state a model call decides on means it was superseded. */
const DECISIONS = new Set([
  'thought',
  'budget_reserved',
  'tool_call_requested',
  'wait_requested',
  'run_completed',
  'run_failed',
  'run_cancelled',
]);

export interface SupersededWatch {
  /** Aborts once another replica recorded a decision after `lastSeq`. */
  readonly signal: AbortSignal;
  stop(): void;
}

/**
 * Watches a run's log while a model call decides on its state through `lastSeq`: when another replica records
 * a decision meanwhile (this one was paused, or both took the run), the call is aborted instead of asking the
 * model again and again for an answer whose append would be refused. Looks every `everyMs`: a retry that
 * starts between a look and the other replica's record may still go out, one look at most.
 */
export function watchSuperseded(
  store: Pick<EventStore, 'readTail'>,
  runId: string,
  lastSeq: number,
  everyMs = 250,
): SupersededWatch {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const look = async () => {
    try {
      const decided = await decidedAfter(store, runId, lastSeq);
      if (decided && !stopped) {
        controller.abort(new Error(decided));
        return;
      }
    } catch {
      // A failed look is no verdict: the next one decides.
    }
    if (!stopped) timer = setTimeout(() => void look(), everyMs).unref();
  };
  timer = setTimeout(() => void look(), everyMs).unref();
  return {
    signal: controller.signal,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** What another replica decided past `lastSeq`, said in a sentence; undefined when nothing. */
async function decidedAfter(
  store: Pick<EventStore, 'readTail'>,
  runId: string,
  lastSeq: number,
): Promise<string | undefined> {
  const after = await store.readTail(runId, { fromSeq: lastSeq + 1 });
  const decided = after.find((event) => DECISIONS.has(event.type));
  return decided && `another replica recorded ${decided.type} at #${decided.seq} of run ${runId} meanwhile`;
}

/**
 * Reads the run's log past `lastSeq` right before a model is asked: resolves when no replica recorded a
 * decision there; rejects (retryable) when one did, or when the log could not be read (this replica may be
 * cut off from it, and so cannot tell). The next delivery of the driving message reads the log again.
 */
export function confirmCurrent(
  store: Pick<EventStore, 'readTail'>,
  runId: string,
  lastSeq: number,
  maxReadMs = CONFIRM_READ_MAX_MS,
): () => Promise<void> {
  return async () => {
    let decided: string | undefined;
    const began = performance.now();
    try {
      decided = await decidedAfter(store, runId, lastSeq);
    } catch (err) {
      throw new DuraError(
        'log_unreadable',
        `run ${runId}: its log could not be read before asking the model (${(err as Error).message}); not asking`,
        { retryable: true, cause: err },
      );
    }
    if (decided) throw new DuraError('decision_superseded', decided, { retryable: true });
    // The answer shows the log as it was somewhere within the read; one held up on the way (a partition that
    // healed, a stalled process) may show it long gone by, when another replica has decided since.
    const tookMs = performance.now() - began;
    if (tookMs > maxReadMs)
      throw new DuraError(
        'log_unreadable',
        `run ${runId}: reading its log before asking the model took ${Math.round(tookMs)} ms, more than ${maxReadMs} ms, so what it showed may be out of date; not asking`,
        { retryable: true },
      );
  };
}

/** How long the read before a model call may take for its answer to count as current. */
export const CONFIRM_READ_MAX_MS = 1_000;

/**
 * `ask(signal, confirm)` under a watch: when another replica records a decision meanwhile, the call is aborted
 * and a retryable `decision_superseded` thrown, so the next delivery re-reads the log and finds that decision.
 * `confirm` is for right before a provider is asked (`confirmCurrent`).
 */
export async function unlessSuperseded<T>(
  store: Pick<EventStore, 'readTail'>,
  runId: string,
  lastSeq: number,
  ask: (signal: AbortSignal, confirm: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const watch = watchSuperseded(store, runId, lastSeq);
  try {
    return await ask(watch.signal, confirmCurrent(store, runId, lastSeq));
  } catch (err) {
    if (!watch.signal.aborted) throw err;
    throw new DuraError('decision_superseded', (watch.signal.reason as Error).message, {
      retryable: true,
      cause: err,
    });
  } finally {
    watch.stop();
  }
}
