import type { JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/nats-core';
import { SUBJECTS, TASK_VERSION, type DecideTask, type NewEvent } from '@dura/contracts';
import { EVENT_TYPE_HEADER, isJsApiError, JS_CODES } from '@dura/event-store';
import { duraTracer } from '@dura/service-kit';
import {
  DURA_ATTRS,
  contextFromTraceparent,
  traceparentOf,
  withProducerSpan,
  withSpan,
} from '@dura/telemetry';
import type { outbox } from './db/schema';

const UTF8 = new TextEncoder();
// A publish buffered while the broker was away may never be answered; give up on it sooner than the
// client's default, so one lost ack does not hold up every run's observations for long.
const PUBLISH_TIMEOUT_MS = 5_000;

export type OutboxRow = typeof outbox.$inferSelect;

/** An observation published: its sequence, and its stored bytes when it landed right behind `after`. */
export interface SentObservation {
  seq: number;
  followed?: Uint8Array;
}

/** Publishes one outbox row: the observation to its run's log, then (`nudge`) a decide task for the planner. */
export type PublishObservation = (
  row: Pick<OutboxRow, 'runId' | 'msgId' | 'subject' | 'payload'>,
  nudge?: boolean,
  after?: number,
) => Promise<SentObservation>;

/**
 * Appends the observation and nudges the planner, in the trace of the tool call that recorded it (its
 * `meta.trace`), so the run's trace goes on through the relay whichever process relays it, and when.
 * `after`: the run's last sequence as the caller knows it; when the observation lands right behind it,
 * `followed` holds the bytes stored, so the caller can fold them without reading the log.
 */
export function createObservationPublisher(js: JetStreamClient): PublishObservation {
  const tracer = duraTracer();
  return (row, nudge = true, after) => {
    const event = row.payload as NewEvent;
    return withSpan(
      tracer,
      'dura.outbox.relay',
      {
        parent: contextFromTraceparent(event.meta.trace),
        attributes: { [DURA_ATTRS.runId]: row.runId, [DURA_ATTRS.eventType]: event.type },
      },
      async () => {
        let followed: Uint8Array | undefined;
        const ack = await withProducerSpan(
          tracer,
          { destination: row.subject, destinationTemplate: 'dura.run.{runId}', messageId: row.msgId },
          async (headers) => {
            headers.set(EVENT_TYPE_HEADER, event.type);
            // Encoded once: the bytes published are the bytes a guarded caller folds (`followed`).
            const data = UTF8.encode(JSON.stringify(event));
            const options = { msgID: row.msgId, headers, timeout: PUBLISH_TIMEOUT_MS };
            if (after === undefined) return js.publish(row.subject, data, options);
            // Guarded by the event it follows: when the log took it there, the caller knows the run's tail.
            // The client writes the expectation into the headers it is given, so the guarded try gets a copy.
            try {
              const guarded = await js.publish(row.subject, data, {
                ...options,
                headers: copyHeaders(headers),
                expect: { lastSubjectSequence: after },
              });
              if (!guarded.duplicate) followed = data;
              return guarded;
            } catch (err) {
              if (!isJsApiError(err, JS_CODES.wrongLastSequence)) throw err;
              return js.publish(row.subject, data, options);
            }
          },
        );
        // A call run inside the planner's drive (`sendNow` without a nudge) is followed up by that drive.
        if (!nudge) return { seq: ack.seq, ...(followed ? { followed } : {}) };
        const msgID = `${row.runId}@${ack.seq}`;
        await withProducerSpan(
          tracer,
          { destination: SUBJECTS.decideTask, messageId: msgID },
          (headers, span) => {
            const trace = traceparentOf(span);
            const task: DecideTask = {
              v: TASK_VERSION,
              runId: row.runId,
              afterSeq: ack.seq,
              reason: event.type === 'timer_fired' ? 'timer' : 'observation',
              ...(trace ? { trace } : {}),
            };
            return js.publish(SUBJECTS.decideTask, JSON.stringify(task), {
              msgID,
              headers,
              timeout: PUBLISH_TIMEOUT_MS,
            });
          },
        );
        return { seq: ack.seq };
      },
    );
  };
}

function copyHeaders(source: MsgHdrs): MsgHdrs {
  const copy = natsHeaders();
  for (const key of source.keys()) for (const value of source.values(key)) copy.append(key, value);
  return copy;
}
