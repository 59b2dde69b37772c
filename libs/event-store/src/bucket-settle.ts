import { isUnansweredPublish } from './jetstream-errors';

/** How long a write to a bucket another process has just created is sent again while nobody answers it. */
export const BUCKET_SETTLE_MS = 3_000;
const RESEND_PAUSE_MS = 100;

/**
 * Sends a write to a KV bucket, and sends it again while nobody answers, for up to `BUCKET_SETTLE_MS`.
 * nats-server 2.9 answers a create of a bucket that another connection is creating at that moment with
 * the stream as it stands, before the stream captures the bucket's subjects: the first write can then find
 * no responder. An unanswered write stored nothing, so sending it again is safe for a create, an update
 * at a revision and a put alike. Any other failure, or the same one past the deadline, is thrown.
 */
export async function whileBucketSettles<T>(write: () => Promise<T>): Promise<T> {
  const giveUpAt = Date.now() + BUCKET_SETTLE_MS;
  for (;;) {
    try {
      return await write();
    } catch (err) {
      if (!isUnansweredPublish(err) || Date.now() >= giveUpAt) throw err;
      await new Promise((resolve) => setTimeout(resolve, RESEND_PAUSE_MS));
    }
  }
}
