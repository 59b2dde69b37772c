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
  constructor(message: string) {
    super('stream_misconfigured', message, { retryable: false });
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
