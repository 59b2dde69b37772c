import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import {
  InvalidArgumentError,
  NoRespondersError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
} from '@nats-io/nats-core';
import { DuraError } from '@dura/contracts';
import { ConcurrencyConflict, EventTooLarge, StreamUnavailable } from './errors';

/** JetStream API error codes Dura acts on. */
export const JS_CODES = {
  wrongLastSequence: JetStreamApiCodes.StreamWrongLastSequence,
  /** What newer servers answer in place of `wrongLastSequence` to a write expecting a key to be empty. */
  wrongLastSequenceUnknown: JetStreamApiCodes.StreamWrongLastSequenceUnknown,
  /** `Nats-Expected-Last-Msg-Id` did not match the stream's last message. */
  wrongLastMsgId: 10070,
  streamNotFound: JetStreamApiCodes.StreamNotFound,
  consumerNotFound: JetStreamApiCodes.ConsumerNotFound,
} as const;

/**
 * JetStream API errors of a cluster that is still forming or electing (no meta leader, peers not yet known):
 * "no suitable peers for placement" (10005), "JetStream cluster not active" (10006), "JetStream system
 * temporarily unavailable" (10008). Waiting fixes them; any other API error needs an operator.
 */
const CLUSTER_NOT_READY_CODES: ReadonlySet<number> = new Set([10005, 10006, 10008]);

/**
 * True when a JetStream management call failed only because the cluster is not ready yet (see above), or
 * timed out: worth retrying with backoff. Permission violations and every other API error are not.
 */
export function isJetStreamNotReady(err: unknown): boolean {
  for (let cause = err, depth = 0; depth < 4 && cause instanceof Error; depth++, cause = cause.cause) {
    if (cause instanceof JetStreamApiError) return CLUSTER_NOT_READY_CODES.has(cause.code);
    // Not "no responders": a server without JetStream answers that way, and waiting would not fix it.
    if (cause instanceof TimeoutError) return true;
  }
  return false;
}

/**
 * True when JetStream refused a management call for good: an API error other than "not ready yet" (R3 on a
 * single server, a bad config) or a denied subject. A timeout or a dropped connection is not a refusal.
 */
export function isJetStreamRefusal(err: unknown): boolean {
  for (let cause = err, depth = 0; depth < 4 && cause instanceof Error; depth++, cause = cause.cause) {
    if (cause instanceof JetStreamApiError) return !CLUSTER_NOT_READY_CODES.has(cause.code);
    if (cause instanceof PermissionViolationError) return true;
  }
  return false;
}

export function isJsApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}

/** A write guarded by the subject's last sequence found another there (`wrongLastSequence`, or its newer code). */
export function isWrongLastSequence(err: unknown): boolean {
  return (
    isJsApiError(err, JS_CODES.wrongLastSequence) || isJsApiError(err, JS_CODES.wrongLastSequenceUnknown)
  );
}

/** Maps a failed publish to one typed error per failure the caller must treat differently. */
export function mapAppendError(
  err: unknown,
  runId: string,
  expectedSeq: number | undefined,
  bytes?: number,
): DuraError {
  if (err instanceof DuraError) return err;
  // The client refuses it before sending; a retry would be refused the same way.
  if (err instanceof InvalidArgumentError && err.message.includes('max_payload'))
    return new EventTooLarge(runId, bytes, err);
  // The stream's last message is not the one the append had to follow (`AppendOptions.follows`).
  if (isJsApiError(err, JS_CODES.wrongLastSequence) || isJsApiError(err, JS_CODES.wrongLastMsgId))
    return new ConcurrencyConflict(runId, expectedSeq ?? -1, err);
  if (isJsApiError(err, JS_CODES.streamNotFound))
    return new StreamUnavailable(
      'this NATS server has no Dura streams (JetStream answered "stream not found"): it is not the server ' +
        "Dura's services use, or none of them has started on it yet; point NATS_URL / --nats at Dura's server",
      err,
    );
  // nats.js 3 reports a publish nobody answered as JetStreamNotEnabled, with the no-responders error as its cause.
  if (isUnansweredPublish(err)) {
    return new StreamUnavailable(
      'no JetStream stream captures this subject: start any Dura service once (services create the streams) and check NATS_URL',
      err,
    );
  }
  if (isTimeout(err)) {
    return new StreamUnavailable(
      'JetStream did not acknowledge the append in time; it is safe to retry (msg-id dedupes)',
      err,
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return new StreamUnavailable(`append to run ${runId} failed: ${message}`, err);
}

/** A request nobody answered in time (nats.js may wrap the timeout as the cause). */
export function isTimeout(err: unknown): boolean {
  return err instanceof TimeoutError || (err instanceof Error && err.cause instanceof TimeoutError);
}

/** Nobody answered a publish: no stream captured its subject at that moment (nats.js wraps the cause). */
export function isUnansweredPublish(err: unknown): boolean {
  return isNoResponders(err) || (err instanceof Error && isNoResponders(err.cause));
}

function isNoResponders(err: unknown): boolean {
  return err instanceof NoRespondersError || (err instanceof RequestError && err.isNoResponders());
}
