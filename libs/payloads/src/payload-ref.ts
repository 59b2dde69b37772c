import { PAYLOAD_URI_PREFIX, PayloadRefSchema, type JsonValue, type PayloadRef } from '@dura/contracts';
import { canonicalJson } from '@dura/core';
import { PayloadRefInvalid } from './errors';

/**
 * Values above this many UTF-8 bytes of JSON leave the event for the object store. JetStream accepts messages up
 * to 1 MiB by default, but the cap that matters is the fold: every reader folds every event of a run, so events
 * stay small (64 KiB) and folds, replays and reads stay fast while large tool results are fetched only when needed.
 */
export const DEFAULT_PAYLOAD_THRESHOLD_BYTES = 64 * 1024;

const encoder = new TextEncoder();

/** The bytes a JSON value is stored as: canonical JSON in UTF-8, so equal values give the same hash. */
export function encodeJsonPayload(value: JsonValue): Uint8Array {
  return encoder.encode(canonicalJson(value));
}

/** True when `value` has the shape of a payload reference (`{uri, sha256, size}` with a `dura-obj://` uri). */
export function isPayloadRef(value: unknown): value is PayloadRef {
  return PayloadRefSchema.safeParse(value).success;
}

/** `dura-obj://<bucket>/<sha256>` split into its parts, or undefined when the uri has another shape. */
export function parsePayloadUri(uri: string): { bucket: string; sha256: string } | undefined {
  if (!uri.startsWith(PAYLOAD_URI_PREFIX)) return undefined;
  const match = /^([A-Za-z0-9_-]+)\/([0-9a-f]{64})$/.exec(uri.slice(PAYLOAD_URI_PREFIX.length));
  return match ? { bucket: match[1]!, sha256: match[2]! } : undefined;
}

/** Validates a reference read off the wire: its shape, and that its uri names the same hash as its `sha256`. */
export function checkPayloadRef(ref: unknown): PayloadRef & { bucket: string } {
  const parsed = PayloadRefSchema.safeParse(ref);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'ref'}: ${issue.message}`);
    throw new PayloadRefInvalid('payload_ref_invalid', `not a payload reference: ${issues.join('; ')}`);
  }
  const uri = parsePayloadUri(parsed.data.uri);
  if (uri === undefined || uri.sha256 !== parsed.data.sha256) {
    throw new PayloadRefInvalid(
      'payload_ref_invalid',
      `payload reference ${parsed.data.uri} does not name its own sha256 ${parsed.data.sha256}; ` +
        `expected ${PAYLOAD_URI_PREFIX}<bucket>/${parsed.data.sha256}`,
    );
  }
  return { ...parsed.data, bucket: uri.bucket };
}

export type Offloaded = { inline: JsonValue } | { ref: PayloadRef };

/**
 * Keeps `value` inline when its canonical JSON is at most `thresholdBytes` UTF-8 bytes; otherwise hands exactly
 * those bytes to `put` (e.g. `(bytes) => store.put(bytes)`) and returns the reference.
 */
export async function offloadIfLarge(
  value: JsonValue,
  thresholdBytes: number,
  put: (bytes: Uint8Array) => Promise<PayloadRef>,
): Promise<Offloaded> {
  if (!Number.isSafeInteger(thresholdBytes) || thresholdBytes < 0) {
    throw new RangeError(`payload threshold must be a whole number of bytes >= 0, got ${thresholdBytes}`);
  }
  const bytes = encodeJsonPayload(value);
  if (bytes.byteLength <= thresholdBytes) return { inline: value };
  return { ref: await put(bytes) };
}
