import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { newEvent, storableReason, type DecodeFailure, type ErrorInfo } from '@dura/contracts';
import { decisionEventId } from '@dura/core';
import { ConcurrencyConflict, type EventStore } from '@dura/event-store';
import { deadLetterFromMsg, publishDeadLetter, withData, type Logger } from '@dura/service-kit';

export interface Rejection {
  error: ErrorInfo;
  issues?: string[];
  /** What the dead letter keeps instead of the message's bytes (a request with its secrets redacted). */
  payload?: Uint8Array;
  /** False when the run id belongs to another run: the dead letter names it, its log gets nothing. */
  announce?: boolean;
  /** The tenant the request named, so that tenant's callers see the refused run. */
  tenant?: string;
}

/** The rejection of a message that failed to decode: its code, its reason and where it went wrong. */
export function refusal(failure: DecodeFailure): Rejection {
  const { code, message, issues } = failure;
  return { error: { code, message }, ...(issues.length > 0 ? { issues } : {}) };
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
  if (!runId || rejection.announce === false) return;
  // Reasons may quote the refused message: made storable, or the projector could not show the refusal.
  const error = { ...rejection.error, message: storableReason(rejection.error.message) };
  const issues = rejection.issues?.slice(0, MAX_ISSUES).map((issue) => storableReason(issue));
  const event = newEvent(
    'run_rejected',
    { error, ...(issues ? { issues } : {}), ...(rejection.tenant ? { tenant: rejection.tenant } : {}) },
    { id: decisionEventId(runId, 0, 0), runId, ts: deps.clock().toISOString(), correlationId: runId },
  );
  try {
    await deps.store.append(runId, [event], { expectedSeq: 0 });
  } catch (err) {
    // The run id already has a history; the dead letter is the record of this refusal.
    if (!(err instanceof ConcurrencyConflict)) throw err;
  }
}

/** Issues a `run_rejected` event keeps; the dead letter keeps up to its own limit. */
const MAX_ISSUES = 100;
