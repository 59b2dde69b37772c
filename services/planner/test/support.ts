import { eventually, storedMessages } from '@dura/testing';
import type { JetStreamManager } from '@nats-io/jetstream';
import {
  DeadLetterSchema,
  STREAMS,
  newEvent,
  type DeadLetter,
  type EventData,
  type EventType,
  type JsonValue,
  type NewEvent,
  type RunEvent,
  type RunRequest,
} from '@dura/contracts';
import { decisionEventId, fold } from '@dura/core';
import { ensureStreams, type EventStore } from '@dura/event-store';
import {
  TEST_STREAM_OPTIONS,
  testConnections,
  testLogger,
  type TestConnections,
} from '@dura/service-kit/testing';
import type { Model, ModelTurn } from '@dura/agents';
export { eventually, storedMessages };

export { TEST_STREAM_OPTIONS as STREAM_OPTIONS, testLogger };

export type Connections = TestConnections;

/** One replica's own NATS connection, with an event store on it. */
export function connect(natsUrl: string, name = 'test'): Promise<Connections> {
  return testConnections(natsUrl, name);
}

export async function prepare(natsUrl: string): Promise<Connections> {
  const conn = await connect(natsUrl, 'test-setup');
  try {
    await ensureStreams(conn.jsm, TEST_STREAM_OPTIONS);
  } catch (err) {
    await conn.close();
    throw err;
  }
  return conn;
}

/** A Model that counts its calls and can take its time, so concurrent drivers really overlap. */
export interface CountingModel extends Model {
  readonly calls: number;
}

export function countingModel(inner: Model, delayMs: () => number = () => 0): CountingModel {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    async decide(input): Promise<ModelTurn> {
      calls += 1;
      const turn = await inner.decide(input);
      const delay = delayMs();
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      return turn;
    },
  };
}

/** Event meta for events a test writes itself: ids that never collide with the planner's `<runId>@<seq>.<i>`. */
export function testEvent<T extends EventType>(
  runId: string,
  type: T,
  data: EventData<T>,
  n: number,
): NewEvent {
  return newEvent(type, data, {
    id: `${runId}:test-${n}`,
    runId,
    ts: new Date().toISOString(),
    correlationId: runId,
  });
}

export function countBy<T>(
  items: readonly T[],
  key: (item: T) => string | number,
): Map<string | number, number> {
  const counts = new Map<string | number, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

export const typesOf = (events: readonly RunEvent[]): string[] => events.map((e) => e.type);

/** Appends `request` the way intake does, as the run's first event (id `<runId>@0.0`); returns its sequence. */
export async function appendRequest(
  store: EventStore,
  request: RunRequest & { runId: string },
): Promise<number> {
  const { runId } = request;
  const meta = {
    id: decisionEventId(runId, 0, 0),
    runId,
    ts: new Date().toISOString(),
    correlationId: runId,
  };
  return (await store.append(runId, [newEvent('run_requested', { request }, meta)], { expectedSeq: 0 }))
    .lastSeq;
}

/** Stands in for the gateway: appends the observation of the run's open call with `result`, the test's `n`-th event. */
export async function completeOpenCall(
  store: EventStore,
  runId: string,
  result: JsonValue,
  n: number,
): Promise<void> {
  const state = fold(await store.read(runId));
  const pending = state.calls.find((call) => call.status === 'pending');
  if (!pending) throw new Error(`run ${runId} has no open call`);
  const observed = {
    callId: pending.callId,
    idempotencyKey: pending.idempotencyKey,
    result,
    attempt: 1,
    deduped: false,
    durationMs: 1,
  };
  await store.append(runId, [testEvent(runId, 'tool_call_completed', observed, n)], { expectedSeq: 'any' });
}

/** Waits until `subject` holds at least `count` dead letters, and returns them all, parsed, in stream order. */
export function untilDeadLetters(
  jsm: JetStreamManager,
  subject: string,
  count: number,
): Promise<DeadLetter[]> {
  return eventually(async () => {
    const found = await storedMessages(jsm, STREAMS.deadLetters, subject);
    return found.length >= count ? found.map((msg) => DeadLetterSchema.parse(msg.json())) : undefined;
  }, `${count} dead letters on ${subject}`);
}
