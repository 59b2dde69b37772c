import { DuraError } from '@dura/contracts';

/**
 * The stored bytes are not the bytes the reference names (wrong size or wrong sha256). Retrying reads the same
 * bytes again, so it is terminal; `put` of the original bytes repairs the object.
 */
export class PayloadCorrupt extends DuraError {
  readonly uri: string;
  readonly expectedSha256: string;
  readonly actualSha256: string;

  constructor(
    uri: string,
    expected: { sha256: string; size: number },
    actual: { sha256: string; size: number },
  ) {
    super(
      'payload_corrupt',
      `payload ${uri} is corrupt: expected sha256 ${expected.sha256} (${expected.size} bytes), ` +
        `the store holds sha256 ${actual.sha256} (${actual.size} bytes); ` +
        'do not use it: put the original bytes again to repair the object, or treat the value as lost',
    );
    this.uri = uri;
    this.expectedSha256 = expected.sha256;
    this.actualSha256 = actual.sha256;
  }
}

/** The reference names an object the bucket does not hold (never stored, deleted, or the bucket was lost). */
export class PayloadMissing extends DuraError {
  readonly uri: string;

  constructor(uri: string, bucket: string) {
    super(
      'payload_missing',
      `payload ${uri} is not in bucket "${bucket}": it was deleted or never stored; ` +
        'check the bucket (nats object ls) and whether it was recreated without its data',
    );
    this.uri = uri;
  }
}

/** The object store did not answer or refused the write. Nothing was lost; retry later. */
export class PayloadUnavailable extends DuraError {
  constructor(message: string, cause?: unknown) {
    super('payload_unavailable', message, { retryable: true, cause });
  }
}

/** The reference is malformed or names another bucket: the same reference fails again, so it is terminal. */
export class PayloadRefInvalid extends DuraError {
  constructor(code: 'payload_ref_invalid' | 'payload_wrong_bucket' | 'payload_not_json', message: string) {
    super(code, message, { retryable: false });
  }
}
