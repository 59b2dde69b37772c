import { z } from 'zod';
import { RunIdSchema } from './ids';

export const FORK_VERSION = 1;

/** Where a forked run came from: the source run and the last of its events the fork copied. */
export const ForkOfSchema = z.object({
  runId: RunIdSchema,
  /** The source's stream sequence the fork was taken at (that event is the last one copied). */
  atSeq: z.number().int().positive(),
});
export type ForkOf = z.infer<typeof ForkOfSchema>;

/**
 * What a client publishes on `dura.fork` (msg-id `fork:<runId>`): start a new run whose log is the source's
 * log up to and including the event at `atSeq`, then let the planner drive it. `runId` names the new run
 * and doubles as the fork's idempotency key; without it the planner names it `fork-<request seq>`.
 */
export const ForkRequestSchema = z.object({
  v: z.literal(FORK_VERSION),
  sourceRunId: RunIdSchema,
  atSeq: z.number().int().positive(),
  runId: RunIdSchema.optional(),
});
export type ForkRequest = z.infer<typeof ForkRequestSchema>;
