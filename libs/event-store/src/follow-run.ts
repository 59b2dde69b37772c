import type { RunReader, StoredRunMessage } from './run-reads';
import type { RunWakeups } from './run-wakeups';
import { pause } from './pause';

export interface FollowOptions {
  /** First stream sequence to yield. */
  fromSeq: number;
  signal?: AbortSignal;
  /** Re-read this often even without a wake-up (default 5 s): wake-ups can be lost. */
  pollMs?: number;
}

/**
 * Re-read delays after a wake-up (or the first read) that found nothing: a wake-up can come before the
 * stream stored the message, or before the replica answering the read has it. The last try asks the leader.
 */
const RETRY_AFTER_WAKE_MS = [10, 25, 50, 100, 250, 500];

/**
 * The run's log from `fromSeq`, history then live, each message once and in stream order: it is read by
 * sequence (a message get from the last seq yielded + 1), so nothing is skipped or repeated whatever the
 * wake-ups do. Creates no consumer. Ends when `signal` aborts; errors of a read are thrown to the caller,
 * who may follow again from the last seq it got + 1.
 */
export async function* followRun(
  deps: { reader: RunReader; wakeups: RunWakeups },
  runId: string,
  options: FollowOptions,
): AsyncGenerator<StoredRunMessage> {
  const pollMs = options.pollMs ?? 5000;
  const signal = options.signal;
  // Subscribed before the first read, so a message stored after that read also wakes us.
  const waker = deps.wakeups.open(runId);
  let next = Math.max(1, options.fromSeq);
  let retries = 0;
  try {
    while (!signal?.aborted) {
      const leader = retries === RETRY_AFTER_WAKE_MS.length;
      const msg = await deps.reader.next(runId, next, { leader });
      if (signal?.aborted) return;
      if (msg !== null && msg.seq >= next) {
        retries = 0;
        next = msg.seq + 1;
        yield msg;
        continue;
      }
      if (retries < RETRY_AFTER_WAKE_MS.length) {
        await pause(RETRY_AFTER_WAKE_MS[retries] ?? 0, signal);
        retries += 1;
        continue;
      }
      // Caught up: sleep until a wake-up (then retry a few times) or the poll interval.
      const woken = await waker.wait(pollMs, signal);
      retries = woken ? 0 : RETRY_AFTER_WAKE_MS.length;
    }
  } finally {
    waker.close();
  }
}
