import type { NewEvent, RunEvent } from '@dura/contracts';
import { RunLog } from '@dura/core/testing';
import { createEventStore, type EventStore, type ReadReport } from '@dura/event-store';
import { createLogger, type Logger, type NatsHandles } from '@dura/service-kit';

/** An event store that records every read it serves, so a test can tell what a resume cost. */
export interface CountingStore {
  store: EventStore;
  readonly reads: ReadReport[];
  /** Events returned by every read since the last reset (by `read` and `readAt` alike). */
  eventsRead(): number;
  reset(): void;
}

export function countingStore(nats: NatsHandles): CountingStore {
  const reads: ReadReport[] = [];
  return {
    store: createEventStore({ ...nats, onRead: (report) => reads.push(report) }),
    reads,
    eventsRead: () => reads.reduce((sum, read) => sum + read.count, 0),
    reset: () => void reads.splice(0),
  };
}

/** A logger that keeps its records, so a test can assert the warning that names why a snapshot was ignored. */
export function recordingLogger(): {
  log: Logger;
  records: Record<string, unknown>[];
  warnings: () => string[];
} {
  const records: Record<string, unknown>[] = [];
  const log = createLogger({
    service: 'planner',
    level: 'debug',
    format: 'json',
    write: (line) => records.push(JSON.parse(line) as Record<string, unknown>),
  });
  return {
    log,
    records,
    warnings: () =>
      records.filter((r) => r['level'] === 'warn').map((r) => `${String(r['msg'])}: ${String(r['reason'])}`),
  };
}

/**
 * A realistic history of `count` (>= 5) events: the request, the start, model turns of thought → intent →
 * completion, and last a turn whose call is still pending after retryable failures (so the next drive
 * re-dispatches it without asking the model).
 */
export function longHistory(runId: string, count: number): RunEvent[] {
  const log = new RunLog(runId).request([], { goal: 'a long run' }).start();
  const turn = (step: number) =>
    log.think([{ tool: 'echo', args: { step, note: 'x'.repeat(step % 40) } }]).intents();
  let step = 1;
  for (; log.events.length + 6 <= count; step += 1) turn(step).complete(`call-${step}`, { step, ok: true });
  turn(step);
  for (let attempt = 1; log.events.length < count; attempt += 1) log.fail(`call-${step}`, true, attempt);
  return log.events;
}

/** The event as a writer hands it to the store: the stream stamps the sequence. */
export function unstamped(event: RunEvent): NewEvent {
  const { seq: _seq, ...rest } = event;
  return rest;
}

/** Appends `events` in batches, each event guarded by the previous one's sequence, as deciders append. */
export async function appendHistory(
  store: EventStore,
  runId: string,
  events: readonly RunEvent[],
  expectedSeq = 0,
): Promise<number> {
  let last = expectedSeq;
  for (let i = 0; i < events.length; i += 500) {
    const batch = events.slice(i, i + 500).map(unstamped);
    last = (await store.append(runId, batch, { expectedSeq: last })).lastSeq;
  }
  return last;
}
