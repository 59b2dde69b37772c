import { DeliverPolicy, type ConsumerMessages, type JetStreamClient } from '@nats-io/jetstream';
import { DuraError, runSubject, STREAMS, type EventType, type RunEvent } from '@dura/contracts';
import { decodeStored } from '@dura/event-store';

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

export const TERMINAL_EVENTS: ReadonlySet<EventType> = new Set([
  'run_completed',
  'run_failed',
  'run_cancelled',
  'run_rejected',
]);

const RETRY_MS = 250;

/**
 * The run subject on JetStream, as an ordered consumer from `fromSeq`: each event exactly once, in order.
 * If the consumer ends without being asked to (the connection or the server went away), it is opened again
 * at the last seq seen + 1, so the caller sees no gap and no duplicate.
 */
export async function* watchRunEvents(
  js: () => Promise<JetStreamClient>,
  runId: string,
  options: WatchOptions = {},
): AsyncGenerator<RunEvent> {
  const untilFinished = options.untilFinished ?? true;
  const resumeTimeoutMs = options.resumeTimeoutMs ?? 60_000;
  let next = Math.max(1, options.fromSeq ?? 1);
  let failingSince: number | undefined;
  const client = await js();
  while (!options.signal?.aborted) {
    let messages: ConsumerMessages;
    try {
      const consumer = await client.consumers.get(STREAMS.runs, {
        filter_subjects: runSubject(runId),
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: next,
      });
      // A short pull expiry re-pulls from a new leader within seconds after a NATS node dies.
      messages = await consumer.consume({ max_messages: 256, expires: 5_000 });
    } catch (err) {
      failingSince ??= Date.now();
      if (Date.now() - failingSince > resumeTimeoutMs || !isTransient(err))
        throw interrupted(runId, next, err);
      await pause(RETRY_MS, options.signal);
      continue;
    }
    const abort = (): void => void messages.close();
    options.signal?.addEventListener('abort', abort, { once: true });
    // 'abort' never fires for a signal that aborted before (or while) the consumer was set up.
    if (options.signal?.aborted) abort();
    try {
      for await (const msg of messages) {
        failingSince = undefined;
        // Never yield a seq twice, whatever a re-opened consumer delivers.
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
    } finally {
      options.signal?.removeEventListener('abort', abort);
      await messages.close();
    }
    if (options.signal?.aborted) return;
    // The consumer ended without being asked to: open it again at `next`, after a short pause.
    failingSince ??= Date.now();
    if (Date.now() - failingSince > resumeTimeoutMs)
      throw interrupted(runId, next, new Error('the consumer kept ending'));
    await pause(RETRY_MS, options.signal);
  }
}

function isTransient(err: unknown): boolean {
  // A closed connection never comes back; everything else (timeouts, no responders, missed heartbeats,
  // a consumer deleted by a restarted server) is worth another attempt.
  const text = err instanceof Error ? `${err.name} ${err.message}` : String(err);
  return !/ClosedConnection|connection closed/i.test(text);
}

function interrupted(runId: string, next: number, cause: unknown): DuraError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new DuraError(
    'watch_interrupted',
    `watching run ${runId} stopped (${why}); resume with watchRun(runId, { fromSeq: ${next} }) once NATS is back`,
    { retryable: true, cause },
  );
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
