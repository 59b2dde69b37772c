import * as z from 'zod';

export const DEAD_LETTER_VERSION = 1;

/** What lands on `dura.dlq.<source>`: the original bytes plus why they were refused. */
export const DeadLetterSchema = z.object({
  v: z.literal(DEAD_LETTER_VERSION),
  source: z.string().min(1),
  subject: z.string().min(1),
  streamSeq: z.number().int().nonnegative().optional(),
  deliveries: z.number().int().nonnegative().optional(),
  error: z.object({ code: z.string().min(1), message: z.string() }),
  issues: z.array(z.string()).optional(),
  /** The refused message, or, when `truncated`, its first bytes: a dead letter must fit in one message. */
  payload: z.string(),
  payloadEncoding: z.enum(['utf8', 'base64']),
  /** Size of the refused message in bytes; set when `payload` holds only its beginning. */
  payloadBytes: z.number().int().nonnegative().optional(),
  truncated: z.boolean().optional(),
  runId: z.string().optional(),
  at: z.string().datetime({ offset: true }),
});
export type DeadLetter = z.infer<typeof DeadLetterSchema>;
