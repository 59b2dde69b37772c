import { DuraApiError, type DuraApi, type RunState } from './dura-api';

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'rejected']);
const POLL_MS = 250;

/**
 * Polls the run until it ends (or waits, with `until: "waiting"`), the timeout passes or `signal` aborts;
 * `onProgress` hears every new state. A run the projection has not seen yet is waited for too.
 */
export async function waitForRun(
  api: DuraApi,
  runId: string,
  options: {
    until: 'end' | 'waiting';
    timeoutMs: number;
    signal: AbortSignal;
    onProgress: (state: RunState) => Promise<void>;
  },
): Promise<{ state: RunState; timedOut: boolean }> {
  const deadline = Date.now() + options.timeoutMs;
  let last: RunState | undefined;
  for (;;) {
    options.signal.throwIfAborted();
    let state: RunState | undefined;
    try {
      state = await api.getRun(runId);
    } catch (err) {
      if (!(err instanceof DuraApiError && err.status === 404)) throw err;
    }
    if (state && state.lastSeq !== last?.lastSeq) {
      last = state;
      await options.onProgress(state);
    }
    if (last && (TERMINAL.has(last.status) || (options.until === 'waiting' && last.status === 'waiting')))
      return { state: last, timedOut: false };
    if (Date.now() >= deadline) {
      if (last) return { state: last, timedOut: true };
      throw new DuraApiError(
        404,
        'run_not_found',
        `run ${runId} did not appear within the wait: check the run id`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
