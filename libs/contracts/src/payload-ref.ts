import * as z from 'zod';

/** `dura-obj://<bucket>/<sha256>`: where an offloaded payload lives in the JetStream object store. */
export const PAYLOAD_URI_PREFIX = 'dura-obj://';

/**
 * A value too large for an event, stored in the object store under its own hash. Readers fetch it lazily and
 * check `sha256` and `size` before trusting a byte of it.
 */
export const PayloadRefSchema = z.object({
  uri: z.string().startsWith(PAYLOAD_URI_PREFIX),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lower-case hex digits'),
  size: z.number().int().nonnegative(),
});
export type PayloadRef = z.infer<typeof PayloadRefSchema>;

export function payloadUri(bucket: string, sha256: string): string {
  return `${PAYLOAD_URI_PREFIX}${bucket}/${sha256}`;
}
