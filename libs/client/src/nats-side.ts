// The client's NATS side: the connection, the event store's readers, wake-ups and KV stores, traced publishing,
// and the mapping of a JetStream error to the SDK's. The rest of the client loads this module (and the modules
// that use the event store: watch-run, live-tokens, parked) with the first call that needs NATS, so a program
// that only uses the read API (listRuns, stateAt, events, submitRunOverApi) never loads NATS or OpenTelemetry.
import type { JetStreamClient, PubAck } from '@nats-io/jetstream';
import type { MsgHdrs } from '@nats-io/nats-core';
import { connectionOf, createRunReader, createRunWakeups, RUN_TOKENS } from '@dura/event-store';
import { DURA_ATTRS, withProducerSpan } from '@dura/telemetry';
import { trace } from '@opentelemetry/api';
import type { JetStreamHandles } from './jetstream-handles';

export { jetstream, jetstreamManager } from '@nats-io/jetstream';
export {
  createScheduleStore,
  createTriggerStore,
  decodeStored,
  explainPermissionViolation,
  mapAppendError,
  openNatsConnection,
} from '@dura/event-store';

/** The readers and wake-ups of the run log and of the token feed. Reads create no consumer (see client.ts). */
export function openReads(handles: JetStreamHandles) {
  return {
    reader: createRunReader(handles.jsm),
    wakeups: createRunWakeups(connectionOf(handles.js)),
    tokens: {
      reader: createRunReader(handles.jsm, RUN_TOKENS),
      wakeups: createRunWakeups(connectionOf(handles.js), RUN_TOKENS.subject),
    },
  };
}

/**
 * Publishes `body` to `subject` under `Nats-Msg-Id: msgID` in a producer span: in the caller's trace when it
 * has one (an app with OpenTelemetry started), so the run continues it.
 */
export function publishTraced(
  js: JetStreamClient,
  publication: { subject: string; msgID: string; runId: string; body: string },
): Promise<PubAck> {
  const { subject, msgID, runId, body } = publication;
  return withProducerSpan(
    trace.getTracer('dura-client'),
    { destination: subject, messageId: msgID, attributes: { [DURA_ATTRS.runId]: runId } },
    (headers: MsgHdrs) => js.publish(subject, body, { msgID, headers }),
  );
}
