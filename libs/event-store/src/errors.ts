import { DuraError } from '@dura/contracts';

/** Another writer appended to the run first. Re-fold the run and decide again; never blindly retry the append. */
export class ConcurrencyConflict extends DuraError {
  readonly runId: string;
  readonly expectedSeq: number;

  constructor(runId: string, expectedSeq: number, cause?: unknown) {
    super(
      'concurrency_conflict',
      `run ${runId} moved past seq ${expectedSeq} before this append; re-fold and decide again`,
      {
        retryable: true,
        cause,
      },
    );
    this.runId = runId;
    this.expectedSeq = expectedSeq;
  }
}

/** JetStream did not answer or the stream is missing. Retry later; nothing was lost. */
export class StreamUnavailable extends DuraError {
  constructor(message: string, cause?: unknown) {
    super('stream_unavailable', message, { retryable: true, cause });
  }
}

/** A stream exists with a shape Dura cannot change in place (e.g. its retention policy). Operator action needed. */
export class StreamMisconfigured extends DuraError {
  constructor(message: string, cause?: unknown) {
    super('stream_misconfigured', message, { retryable: false, cause });
  }
}

/** A stored event could not be decoded; carries the stream sequence so an operator can find it. */
export class CorruptEvent extends DuraError {
  readonly seq: number;

  constructor(seq: number, message: string, cause?: unknown) {
    super('corrupt_event', `event at seq ${seq}: ${message}`, { retryable: false, cause });
    this.seq = seq;
  }
}

/**
 * An event larger than the server accepts in one message (`max_payload`, 1 MiB by default). Retrying cannot
 * help: the message that led to it is refused for good with this reason.
 */
export class EventTooLarge extends DuraError {
  readonly runId: string;

  constructor(runId: string, bytes: number | undefined, cause?: unknown) {
    const size = bytes === undefined ? '' : ` (${bytes} bytes)`;
    super(
      'event_too_large',
      `an event for run ${runId}${size} is larger than the NATS server's max_payload (1 MiB unless configured): ` +
        'keep run inputs, step arguments and signal payloads well below it, and pass large data by reference',
      { retryable: false, cause },
    );
    this.runId = runId;
  }
}

/**
 * An event that breaks the run log's limits (`EVENT_LIMITS`: nesting depth, string and array sizes, key
 * counts). It is never appended, so every event on the log can be read back by every service; retrying
 * cannot help.
 */
export class EventOverLimits extends DuraError {
  readonly runId: string;

  constructor(runId: string, reason: string) {
    super(
      'event_over_limits',
      `an event for run ${runId} was not appended: ${reason} (the run log's limits, see docs/security/input-limits.md)`,
      { retryable: false },
    );
    this.runId = runId;
  }
}
