import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type PubAck,
} from '@nats-io/jetstream';
import { headers as natsHeaders, nanos } from '@nats-io/nats-core';
import {
  decodeEvent,
  EVENT_LIMITS,
  runSubject,
  scanJson,
  STREAMS,
  type NewEvent,
  type RunEvent,
} from '@dura/contracts';
import { CorruptEvent, EventOverLimits } from './errors';
import { isJsApiError, isTimeout, JS_CODES, mapAppendError } from './jetstream-errors';

export interface AppendOptions {
  /**
   * Stream sequence of the run's last event as the caller folded it (0 = the run has no events yet).
   * `'any'` appends without the check: only for facts that cannot conflict, such as tool observations.
   */
  expectedSeq: number | 'any';
  /**
   * Sends every event at once instead of waiting for each ack before the next: the first is guarded by
   * `expectedSeq`, each later one by the stream's last message being the one before it
   * (`Nats-Expected-Last-Msg-Id`), so each still lands right behind its predecessor in the run's log. One
   * round trip instead of one per event while nothing else is appended to the stream in between; when
   * something was, the rest go out one by one, guarded by the run's last sequence as usual.
   */
  pipelined?: boolean;
  /**
   * The id of an event sent to the run's log just before this append and not yet acknowledged: the first
   * event must land right behind it in the stream (`Nats-Expected-Last-Msg-Id`) as well as at `expectedSeq`,
   * so it lands only if that event landed at `expectedSeq` and nothing followed it. A refusal is a
   * `ConcurrencyConflict`.
   */
  follows?: string;
}

/**
 * An event sent to its run's log and not yet acknowledged (a worker's observation, handed to the drive
 * before its ack so the next turn can follow it: `AppendOptions.follows`).
 */
export interface SentEvent {
  id: string;
  /** The event as the log stores it at `seq`. */
  as(seq: number): RunEvent;
  /** Publishes it now, if that has not happened yet (synchronously: what is sent next goes out behind it). */
  send(): void;
  /**
   * Publishes it if need be, and settles with its sequence and whether it landed right behind the sequence
   * it was sent after (then `as(seq)` is the event stored), or undefined when it went another way.
   */
  landed(): Promise<{ seq: number; followed: boolean } | undefined>;
}

export interface AppendResult {
  /** Stream sequence of each appended event, in order. */
  seqs: number[];
  lastSeq: number;
  /** True when JetStream reported a msg-id it had already stored: the caller should re-read before deciding. */
  duplicate: boolean;
}

/** The run log on JetStream: one subject per run, append-only. */
export interface EventStore {
  /** Appends in order; every event carries its `meta.id` as `Nats-Msg-Id` so retries are dropped as duplicates. */
  append(runId: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult>;
  /** Reads the run's events with `seq >= fromSeq` (default: all), upcast to the current versions. */
  read(runId: string, options?: { fromSeq?: number }): Promise<RunEvent[]>;
  /**
   * The run's few newest events: those with `seq >= fromSeq`, fetched one by one with a direct message get
   * (one round trip each, and no consumer to create), falling back to `read` for the rest after
   * `DIRECT_READ_LIMIT`. With `through`, it stops at the first event at or past that sequence: the caller
   * knows the log reached it (a decide task names it) and its next guarded append proves nothing followed.
   */
  readTail(runId: string, options: { fromSeq: number; through?: number }): Promise<RunEvent[]>;
  /** The run's event stored at stream sequence `seq`, or undefined when that sequence holds no event of this run. */
  readAt(runId: string, seq: number): Promise<RunEvent | undefined>;
  /**
   * When the broker stored the run's event at stream sequence `seq` (its own timestamp, the same on every
   * replica and for every reader), or undefined when that sequence holds no event of this run.
   */
  storedAt(runId: string, seq: number): Promise<Date | undefined>;
}

/** What one read returned: `count` events of `runId` from `fromSeq` (for `readAt`, 0 or 1 at `seq`). */
export interface ReadReport {
  runId: string;
  fromSeq: number;
  count: number;
}

export const EVENT_TYPE_HEADER = 'Dura-Event-Type';
const EXPECTED_LAST_MSG_ID_HEADER = 'Nats-Expected-Last-Msg-Id';

/** What a publish to a run's log expects: the run's last sequence, or the stream's last message id. */
interface PublishGuard {
  seq?: number;
  afterMsgId?: string;
}
const READ_BATCH = 1000;
/** Direct gets a tail read makes before a consumer is the cheaper way to read the rest. */
export const DIRECT_READ_LIMIT = 8;
const encoder = new TextEncoder();
/** How often an append left unacknowledged is sent (under its msg-id) before the caller is told it failed. */
export const APPEND_SENDS = 3;

export function createEventStore(deps: {
  js: JetStreamClient;
  jsm: JetStreamManager;
  ackTimeoutMs?: number;
  /** Called after every read with how many events it returned: makes the cost of a resume observable. */
  onRead?: (report: ReadReport) => void;
}): EventStore {
  const { js, jsm } = deps;
  const timeout = deps.ackTimeoutMs ?? 5000;

  /**
   * Publishes one event. One the stream did not acknowledge in time may still be stored (a disk that stalls
   * holds the acknowledgement, not the message), so it is sent again under its msg-id, which the stream
   * deduplicates (that check comes before the expected-sequence one): the caller learns what became of it,
   * instead of deciding again what another attempt may already have recorded.
   */
  async function publishEvent(runId: string, event: NewEvent, data: Uint8Array, guard: PublishGuard) {
    const headers = natsHeaders();
    headers.set(EVENT_TYPE_HEADER, event.type);
    if (event.meta.trace) headers.set('traceparent', event.meta.trace);
    if (guard.afterMsgId !== undefined) headers.set(EXPECTED_LAST_MSG_ID_HEADER, guard.afterMsgId);
    for (let sent = 1; ; sent += 1) {
      try {
        return await js.publish(runSubject(runId), data, {
          msgID: event.meta.id,
          headers,
          timeout,
          ...(guard.seq === undefined ? {} : { expect: { lastSubjectSequence: guard.seq } }),
        });
      } catch (err) {
        if (!isTimeout(err) || sent >= APPEND_SENDS) throw err;
      }
    }
  }

  async function append(
    runId: string,
    events: readonly NewEvent[],
    options: AppendOptions,
  ): Promise<AppendResult> {
    const encoded = events.map((event) => encodeWithinLimits(runId, event));
    const result: AppendResult = { seqs: [], lastSeq: 0, duplicate: false };
    const start = options.expectedSeq;
    const follows = start === 'any' ? undefined : options.follows;
    const from =
      options.pipelined && start !== 'any' && events.length > 1
        ? await appendPipelined(runId, events, encoded, start, result, follows)
        : 0;
    let expected = result.seqs.length > 0 ? (result.seqs.at(-1) as number) : start;
    for (let i = from; i < events.length; i += 1) {
      const data = encoded[i] as Uint8Array;
      try {
        const ack = await publishEvent(runId, events[i] as NewEvent, data, {
          ...(expected === 'any' ? {} : { seq: expected }),
          ...(i === 0 && follows !== undefined ? { afterMsgId: follows } : {}),
        });
        result.duplicate ||= ack.duplicate;
        result.seqs.push(ack.seq);
        if (expected !== 'any') expected = ack.seq;
      } catch (err) {
        throw mapAppendError(err, runId, expected === 'any' ? undefined : expected, data.length);
      }
    }
    result.lastSeq = result.seqs.at(-1) ?? 0;
    return result;
  }

  /**
   * Sends all events at once (see `AppendOptions.pipelined`) and records the acks of the leading ones that
   * landed; returns how many did, so the caller sends the rest one by one. The first event's failure is the
   * append's; a later one refused because another message reached the stream first is not a failure.
   */
  async function appendPipelined(
    runId: string,
    events: readonly NewEvent[],
    encoded: readonly Uint8Array[],
    expectedSeq: number,
    result: AppendResult,
    follows: string | undefined,
  ): Promise<number> {
    const acks = await Promise.allSettled(
      events.map((event, i) =>
        publishEvent(
          runId,
          event,
          encoded[i] as Uint8Array,
          i === 0
            ? { seq: expectedSeq, ...(follows !== undefined ? { afterMsgId: follows } : {}) }
            : { afterMsgId: (events[i - 1] as NewEvent).meta.id },
        ),
      ),
    );
    const first = acks[0] as PromiseSettledResult<PubAck>;
    if (first.status === 'rejected')
      throw mapAppendError(first.reason, runId, expectedSeq, (encoded[0] as Uint8Array).length);
    let landed = 0;
    for (const ack of acks) {
      // A duplicate was stored by an earlier attempt, maybe not right behind this one's predecessor.
      if (ack.status === 'rejected' || result.duplicate) break;
      result.duplicate ||= ack.value.duplicate;
      result.seqs.push(ack.value.seq);
      landed += 1;
    }
    for (const ack of acks.slice(landed)) {
      if (ack.status === 'rejected' && !isJsApiError(ack.reason, JS_CODES.wrongLastMsgId))
        throw mapAppendError(ack.reason, runId, result.seqs.at(-1), undefined);
    }
    return result.duplicate ? events.length : landed;
  }

  async function read(runId: string, options: { fromSeq?: number } = {}): Promise<RunEvent[]> {
    const fromSeq = options.fromSeq ?? 1;
    const messages = await readRaw(js, jsm, runSubject(runId), fromSeq);
    deps.onRead?.({ runId, fromSeq, count: messages.length });
    return messages.map(decodeStored);
  }

  async function readTail(
    runId: string,
    options: { fromSeq: number; through?: number },
  ): Promise<RunEvent[]> {
    const subject = runSubject(runId);
    const out: RunEvent[] = [];
    let next = Math.max(1, options.fromSeq);
    for (;;) {
      if (out.length === DIRECT_READ_LIMIT) {
        const rest = await readRaw(js, jsm, subject, next);
        deps.onRead?.({ runId, fromSeq: options.fromSeq, count: out.length + rest.length });
        return [...out, ...rest.map(decodeStored)];
      }
      // STREAM.MSG.GET with `next_by_subj` (server 2.9+): the first message on the subject at or after `seq`,
      // answered by the stream leader, so it is as fresh as the acks our appends got.
      const msg = await jsm.streams.getMessage(STREAMS.runs, { next_by_subj: subject, seq: next } as never);
      if (msg === null || msg.subject !== subject) break;
      out.push(decodeStored({ seq: msg.seq, data: msg.data }));
      next = msg.seq + 1;
      if (options.through !== undefined && msg.seq >= options.through) break;
    }
    deps.onRead?.({ runId, fromSeq: options.fromSeq, count: out.length });
    return out;
  }

  async function readAt(runId: string, seq: number): Promise<RunEvent | undefined> {
    const msg = await jsm.streams.getMessage(STREAMS.runs, { seq });
    const mine = msg !== null && msg.subject === runSubject(runId);
    deps.onRead?.({ runId, fromSeq: seq, count: mine ? 1 : 0 });
    return mine ? decodeStored({ seq: msg.seq, data: msg.data }) : undefined;
  }

  async function storedAt(runId: string, seq: number): Promise<Date | undefined> {
    const msg = await jsm.streams.getMessage(STREAMS.runs, { seq });
    if (msg === null || msg.subject !== runSubject(runId)) return undefined;
    // `timestamp` keeps the server's nanoseconds (RFC 3339); `time` is the same instant to the millisecond.
    return msg.timestamp ? new Date(msg.timestamp) : msg.time;
  }

  return { append, read, readTail, readAt, storedAt };
}

/**
 * The event's bytes, once they keep the run log's limits: what is appended can always be read back. One
 * encode and one linear scan of its bytes; a value nested past what JSON.stringify can walk is over the
 * limits too.
 */
function encodeWithinLimits(runId: string, event: NewEvent): Uint8Array {
  let data: Uint8Array;
  try {
    data = encoder.encode(JSON.stringify(event));
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    // Only nesting far past the limit exhausts the stack, so the reason is the depth limit.
    throw new EventOverLimits(
      runId,
      `the event nests deeper than ${EVENT_LIMITS.maxDepth} levels (${err.message})`,
    );
  }
  // Over max_payload is the server's to refuse (EventTooLarge); every other limit is ours.
  const problem = scanJson(data, { ...EVENT_LIMITS, maxBytes: Number.MAX_SAFE_INTEGER }).problem;
  if (problem) throw new EventOverLimits(runId, problem.message);
  return data;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes one stored message; a message that is not a valid event becomes a `CorruptEvent` naming its seq.
 * The run log's limits are checked on the bytes before anything recursive touches them.
 */
export function decodeStored(msg: { seq: number; data: Uint8Array }): RunEvent {
  const problem = scanJson(msg.data, { ...EVENT_LIMITS, maxBytes: Number.MAX_SAFE_INTEGER }).problem;
  if (problem) throw new CorruptEvent(msg.seq, `breaks the run log's limits: ${problem.message}`);
  let text: string;
  try {
    text = fatalUtf8.decode(msg.data);
  } catch (err) {
    throw new CorruptEvent(msg.seq, 'payload is not UTF-8', err);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CorruptEvent(msg.seq, 'payload is not JSON', err);
  }
  try {
    return decodeEvent(raw, msg.seq);
  } catch (err) {
    throw new CorruptEvent(msg.seq, (err as Error).message, err);
  }
}

/**
 * Reads every message on `subject` from `fromSeq` through a short-lived consumer. The consumer's
 * `num_pending` at creation tells how many to expect, so the read ends without waiting on a timeout.
 */
export async function readRaw(
  js: JetStreamClient,
  jsm: JetStreamManager,
  subject: string,
  fromSeq: number,
): Promise<{ seq: number; data: Uint8Array }[]> {
  const info = await jsm.consumers.add(STREAMS.runs, {
    filter_subject: subject,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: Math.max(1, fromSeq),
    ack_policy: AckPolicy.None,
    inactive_threshold: nanos(30_000),
    mem_storage: true,
    num_replicas: 1,
  });
  const out: { seq: number; data: Uint8Array }[] = [];
  try {
    const total = info.num_pending;
    const consumer = js.consumers.getConsumerFromInfo(info);
    while (out.length < total) {
      const batch = await consumer.fetch({
        max_messages: Math.min(READ_BATCH, total - out.length),
        expires: 5000,
      });
      let got = 0;
      for await (const msg of batch as AsyncIterable<JsMsg>) {
        out.push({ seq: msg.seq, data: msg.data });
        got += 1;
      }
      if (got === 0) break;
    }
  } finally {
    jsm.consumers.delete(STREAMS.runs, info.name).catch(() => undefined);
  }
  return out;
}
