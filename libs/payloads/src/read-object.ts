import type { ObjectInfo, ObjectResult } from '@nats-io/obj';
import type { PayloadRef } from '@dura/contracts';
import { PayloadCorrupt, PayloadUnavailable } from './errors';

/**
 * Reads an object's chunks into one buffer. The object store checks the chunks against the digest it recorded;
 * a mismatch there means the chunks themselves were damaged. A read that stalls is cancelled rather than left
 * hanging (missing chunks never arrive).
 */
export async function readObject(
  result: ObjectResult,
  ref: PayloadRef,
  idleTimeoutMs: number,
): Promise<Uint8Array> {
  const uri = ref.uri;
  // The reader reports every failure; the error promise is observed only so it never rejects unhandled.
  result.error.catch(() => undefined);
  const reader = result.data.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let stalled = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      stalled = true;
      reader.cancel().catch(() => undefined);
    }, idleTimeoutMs);
  };
  try {
    arm();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
      arm();
    }
  } catch (err) {
    const computed = /computed: SHA-256 ([0-9a-f]{64})/.exec(err instanceof Error ? err.message : '');
    if (computed) {
      throw new PayloadCorrupt(uri, ref, { sha256: computed[1]!, size: total });
    }
    throw new PayloadUnavailable(`reading payload ${uri} failed: ${String(err)}; retry later`, err);
  } finally {
    clearTimeout(timer);
  }
  if (stalled) {
    throw new PayloadUnavailable(
      `reading payload ${uri} stalled: no data for ${idleTimeoutMs} ms after ${total} of ${result.info.size} bytes; retry later`,
    );
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

const DIGEST_PREFIX = 'SHA-256=';

/** The object store's `SHA-256=<base64url>` digest as lower-case hex (the raw digest when it has another form). */
export function digestHex(info: ObjectInfo): string {
  if (!info.digest.startsWith(DIGEST_PREFIX)) return info.digest;
  return Buffer.from(info.digest.slice(DIGEST_PREFIX.length), 'base64url').toString('hex');
}
