import * as z from 'zod';
import { DebounceSchema, GateKeySchema } from './run-gate';
import { RunRequestSchema } from './run-request';

// A debounced `POST /runs` is kept in its key's window until the window ends. The projector holds no secrets
// key, so it hands the request to a planner (request/reply on `SUBJECTS.runGateAsk`, one planner of the queue
// group answers): the planner seals the request's secrets, as it seals an event trigger's, before the window
// keeps it, and answers what the gate did.

export const GATE_ASK_VERSION = 1 as const;

/** What the projector asks a planner to take into a debounce window. */
export const GateAskSchema = z.object({
  v: z.literal(GATE_ASK_VERSION),
  /** `runs:<tenant>`: the API's keys never share a record with a trigger's. */
  scope: z.string().min(1),
  key: GateKeySchema,
  windowMs: DebounceSchema.shape.windowMs,
  skipIfRunning: z.boolean(),
  /** The request's id in logs and in the window's dropped list. */
  source: z.string().min(1),
  /** The window's run id without its opening time, which the planner appends in base 36. */
  windowRunIdPrefix: z.string().min(1),
  /** The run request in clear (the ask is a core NATS message: never stored). */
  request: RunRequestSchema,
});
export type GateAsk = z.infer<typeof GateAskSchema>;

/** A planner's answer: where the request waits, or why it was not taken (nothing was kept then). */
export const GateAnswerSchema = z.union([
  z.object({
    debounced: z.object({
      runId: z.string(),
      fireAt: z.number().int(),
      /** The request this one replaced in the window, if it was not the first. */
      replaced: z.string().optional(),
      events: z.number().int(),
    }),
  }),
  z.object({
    refused: z.object({ code: z.string(), message: z.string(), retryable: z.boolean() }),
  }),
]);
export type GateAnswer = z.infer<typeof GateAnswerSchema>;
