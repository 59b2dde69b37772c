import * as z from 'zod';

/** The tag of a sealed value in the log: `{"$secret": {kid, iv, ct, tag}}` (AES-256-GCM, base64 parts). */
export const SECRET_TAG = '$secret';

/** A sealed secret as the log, a run's input and a tool's arguments hold it; only a gateway opens it. */
export const SecretEnvelopeSchema = z
  .object({
    [SECRET_TAG]: z
      .object({
        /** Id of the key it was sealed with: rotation keeps old keys for opening only. */
        kid: z.string().min(1),
        iv: z.string().min(1),
        ct: z.string(),
        tag: z.string().min(1),
      })
      .strict(),
  })
  .strict();
export type SecretEnvelope = z.infer<typeof SecretEnvelopeSchema>;

/** Whether `value` is a sealed secret (and not merely an object with a `$secret` key of another shape). */
export function isSecretEnvelope(value: unknown): value is SecretEnvelope {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.hasOwn(value, SECRET_TAG) &&
    SecretEnvelopeSchema.safeParse(value).success
  );
}

/**
 * What is wrong with a secret path (`"card.token"`, `"items.*.token"`: dot paths, `*` every key or element),
 * or undefined when it is well formed.
 */
export function secretPathIssue(path: string): string | undefined {
  if (path.length === 0) return 'a secret path is empty';
  if (path.split('.').some((segment) => segment.length === 0))
    return `secret path "${path}" has an empty segment; write fields as "a.b.c", and "*" for every element`;
  return undefined;
}
