import { DuraError } from '@dura/contracts';

/** Thrown by a handler that wants its message again after `delayMs` (a backoff it computed itself). */
export class RetryLater extends DuraError {
  readonly delayMs: number;
  /**
   * The message did not fail, it only has to wait (a throttled call): it goes to the back of the stream as a
   * fresh message instead of a redelivery, so waiting never uses up its bounded deliveries.
   */
  readonly requeue: boolean;
  /** Bytes the requeued copy carries instead of the message's (e.g. a request with its secrets sealed). */
  readonly data: Uint8Array | undefined;
  /** Runs once the copy is published, before the message is acked (e.g. erases it: it held secrets). */
  readonly requeued: (() => Promise<void>) | undefined;

  constructor(
    message: string,
    delayMs: number,
    opts: { requeue?: boolean; data?: Uint8Array; requeued?: () => Promise<void> } = {},
  ) {
    super('retry_later', message, { retryable: true });
    this.delayMs = delayMs;
    this.requeue = opts.requeue ?? false;
    this.data = opts.data;
    this.requeued = opts.requeued;
  }
}
