import * as z from 'zod';
import { JsonValueSchema, RunIdSchema } from './ids';

export const SIGNAL_VERSION = 1;

/** What a client publishes on `dura.signal` to approve, reject, cancel or send a named event to a run. */
export const SignalRequestSchema = z.object({
  v: z.literal(SIGNAL_VERSION),
  runId: RunIdSchema,
  signalId: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  payload: JsonValueSchema.optional(),
});
export type SignalRequest = z.infer<typeof SignalRequestSchema>;
