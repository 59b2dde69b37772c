import { DuraError, type RunEvent } from '@dura/contracts';
import { decodeStored, followRun, pause, type RunReader, type RunWakeups } from '@dura/event-store';
import { TERMINAL_EVENTS } from './terminal-events';

export interface WatchOptions {
  /** First stream sequence to deliver (default: the run's first event). Resume after a disconnect with lastSeq + 1. */
  fromSeq?: number;
  /** Stop after the run's terminal event (default true). */
  untilFinished?: boolean;
  signal?: AbortSignal;
  /**
   * How long to keep trying to re-open the watch after the connection broke (default 60 s); then it throws
   * `watch_interrupted` naming the seq to resume from.
   */
  resumeTimeoutMs?: number;
}


const RETRY_MS = 250;

/** What a watch reads with: message gets by sequence and core-NATS wake-ups (no consumer, see followRun). */
export interface WatchDeps {
  reader: RunReader;
  wakeups: RunWakeups;
}

/**
 * The run's log read by sequence from `fromSeq` (message gets woken by the run subject): each event exactly
 * once, in order. If a read fails (the connection or the server went away), it is tried again at the last
 * seq seen + 1, so the caller sees no gap and no duplicate. Creates no consumer, so it works for a user
 * that may not create one.
 */
export async function* watchRunEvents(
  deps: () => Promise<WatchDeps>,
  runId: string,
  options: WatchOptions = {},
): AsyncGenerator<RunEvent> {
  const untilFinished = options.untilFinished ?? true;
  const resumeTimeoutMs = options.resumeTimeoutMs ?? 60_000;
  let next = Math.max(1, options.fromSeq ?? 1);
  let failingSince: number | undefined;
  const follow = await deps();
  while (!options.signal?.aborted) {
    try {
      const messages = followRun(follow, runId, {
        fromSeq: next,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      for await (const msg of messages) {
        failingSince = undefined;
        // Never yield a seq twice.
        if (msg.seq < next) continue;
        const event = decodeStored(msg);
        next = msg.seq + 1;
        yield event;
        if (untilFinished && TERMINAL_EVENTS.has(event.type)) return;
      }
    } catch (err) {
      if (err instanceof DuraError || !isTransient(err)) throw err;
      failingSince ??= Date.now();
      if (Date.now() - failingSince > resumeTimeoutMs) throw interrupted(runId, next, err);
      await pause(RETRY_MS, options.signal);
    }
  }
}

function isTransient(err: unknown): boolean {
  // A closed connection never comes back, nor does a permission; everything else (timeouts, no responders, missed heartbeats,
  // a consumer deleted by a restarted server) is worth another attempt.
  const text = err instanceof Error ? `${err.name} ${err.message}` : String(err);
  return !/ClosedConnection|connection closed|Permissions Violation/i.test(text);
}

function interrupted(runId: string, next: number, cause: unknown): DuraError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new DuraError(
    'watch_interrupted',
    `watching run ${runId} stopped (${why}); resume with watchRun(runId, { fromSeq: ${next} }) once NATS is back`,
    { retryable: true, cause },
  );
}
