import { z } from 'zod';
import { JsonObjectSchema, RunIdSchema, ToolNameSchema } from './ids';

export const TASK_VERSION = 1;

/** A command to the tool gateway: run `tool` once for `idempotencyKey`. Published with msg-id = the key. */
export const ToolTaskSchema = z.object({
  v: z.literal(TASK_VERSION),
  runId: RunIdSchema,
  callId: z.string().min(1),
  step: z.number().int().positive(),
  tool: ToolNameSchema,
  args: JsonObjectSchema,
  idempotencyKey: z.string().min(1),
  causationId: z.string().min(1),
  correlationId: z.string().min(1),
  trace: z.string().optional(),
});
export type ToolTask = z.infer<typeof ToolTaskSchema>;

/** A nudge to the planner: the run's log grew past `afterSeq`, fold it and act. Msg-id `<runId>@<afterSeq>`. */
export const DecideTaskSchema = z.object({
  v: z.literal(TASK_VERSION),
  runId: RunIdSchema,
  afterSeq: z.number().int().nonnegative(),
  reason: z.enum(['started', 'observation', 'signal', 'resume']),
  trace: z.string().optional(),
});
export type DecideTask = z.infer<typeof DecideTaskSchema>;
