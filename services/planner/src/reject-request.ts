import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { newEvent, type ErrorInfo } from '@dura/contracts';
import { decisionEventId } from '@dura/core';
import { ConcurrencyConflict, type EventStore } from '@dura/event-store';
import { deadLetterFromMsg, publishDeadLetter, withData, type Logger } from '@dura/service-kit';

export interface Rejection {
  error: ErrorInfo;
  issues?: string[];
  /** What the dead letter keeps instead of the message's bytes (a request with its secrets redacted). */
  payload?: Uint8Array;
}

/**
 * Refuses a request that cannot start a run (a submit or a fork): it is dead-lettered on `dura.dlq.<source>`
 * with the reason, never lost and never redelivered, and when it names a run id that has no history yet,
 * the run gets `run_rejected` so a client watching it learns why.
 */
export async function rejectRequest(
  deps: { store: EventStore; js: JetStreamClient; log: Logger; clock: () => Date },
  msg: JsMsg,
  source: string,
  runId: string | undefined,
  rejection: Rejection,
): Promise<void> {
  deps.log.warn(`${source} request refused`, {
    runId,
    seq: msg.seq,
    error: rejection.error,
    issues: rejection.issues,
  });
  const letter = deadLetterFromMsg(
    rejection.payload ? withData(msg, rejection.payload) : msg,
    source,
    rejection.error,
    {
      now: deps.clock(),
      ...(rejection.issues ? { issues: rejection.issues } : {}),
      ...(runId ? { runId } : {}),
    },
  );
  await publishDeadLetter(deps.js, letter);
  if (!runId) return;
  const event = newEvent(
    'run_rejected',
    { error: rejection.error, ...(rejection.issues ? { issues: rejection.issues } : {}) },
    { id: decisionEventId(runId, 0, 0), runId, ts: deps.clock().toISOString(), correlationId: runId },
  );
  try {
    await deps.store.append(runId, [event], { expectedSeq: 0 });
  } catch (err) {
    // The run id already has a history; the dead letter is the record of this refusal.
    if (!(err instanceof ConcurrencyConflict)) throw err;
  }
}
