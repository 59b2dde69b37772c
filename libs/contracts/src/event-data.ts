import { z } from 'zod';
import { JsonObjectSchema, JsonValueSchema, RunIdSchema, ToolNameSchema } from './ids';
import { RunRequestSchema } from './run-request';
import { ForkOfSchema } from './fork';

export const ErrorInfoSchema = z.object({
  code: z.string().min(1),
  message: z.string(),
  retryable: z.boolean().optional(),
});
export type ErrorInfo = z.infer<typeof ErrorInfoSchema>;

export const ToolCallSchema = z.object({
  callId: z.string().min(1),
  tool: ToolNameSchema,
  args: JsonObjectSchema,
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

/** What the model decided; recorded in a `thought` before anything acts on it. */
export const DecisionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('tool_calls'), calls: z.array(ToolCallSchema).min(1) }),
  z.object({ kind: z.literal('complete'), output: JsonValueSchema.optional() }),
  z.object({ kind: z.literal('fail'), error: ErrorInfoSchema }),
]);
export type Decision = z.infer<typeof DecisionSchema>;

export const UsageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof UsageSchema>;

export const ModelInfoSchema = z.object({
  id: z.string().min(1),
  promptVersion: z.string(),
});

/** Schemas of each event's `data`, current version. Keys are the event types. */
export const EventDataSchemas = {
  run_requested: z.object({
    request: RunRequestSchema.extend({ runId: RunIdSchema }),
    /** Present when the run is a fork: its log starts with copies of the source's events up to `atSeq`. */
    forkOf: ForkOfSchema.optional(),
  }),
  run_started: z.object({}),
  run_rejected: z.object({ error: ErrorInfoSchema, issues: z.array(z.string()).optional() }),
  thought: z.object({
    step: z.number().int().nonnegative(),
    model: ModelInfoSchema,
    content: z.string().optional(),
    decision: DecisionSchema,
    usage: UsageSchema,
    finishReason: z.string(),
  }),
  tool_call_requested: z.object({
    callId: z.string().min(1),
    step: z.number().int().positive(),
    tool: ToolNameSchema,
    args: JsonObjectSchema,
    idempotencyKey: z.string().min(1),
  }),
  tool_call_completed: z.object({
    callId: z.string().min(1),
    idempotencyKey: z.string().min(1),
    result: JsonValueSchema,
    attempt: z.number().int().positive(),
    deduped: z.boolean(),
    durationMs: z.number().nonnegative(),
  }),
  tool_call_failed: z.object({
    callId: z.string().min(1),
    idempotencyKey: z.string().min(1),
    error: ErrorInfoSchema,
    attempt: z.number().int().positive(),
    retryable: z.boolean(),
    /** The tool's policy: when this final failure arrives, the run fails without asking the model. */
    failRun: z.boolean().optional(),
  }),
  wait_requested: z.object({
    waitId: z.string().min(1),
    kind: z.enum(['signal', 'timer', 'child', 'operator']),
    signal: z.string().optional(),
    until: z.string().optional(),
    childRunId: RunIdSchema.optional(),
    /** For `operator` waits: the call whose outcome is unknown; signal `confirm` or `skip` resolves it. */
    callId: z.string().min(1).optional(),
  }),
  signal_received: z.object({
    signalId: z.string().min(1),
    name: z.string().min(1),
    payload: JsonValueSchema.optional(),
  }),
  timer_fired: z.object({ waitId: z.string().min(1) }),
  child_run_requested: z.object({ childRunId: RunIdSchema, request: RunRequestSchema }),
  child_run_completed: z.object({
    childRunId: RunIdSchema,
    status: z.enum(['completed', 'failed', 'cancelled']),
    output: JsonValueSchema.optional(),
  }),
  snapshot_taken: z.object({ atSeq: z.number().int().nonnegative() }),
  budget_exceeded: z.object({
    budget: z.enum(['steps', 'tokens', 'time', 'cost']),
    limit: z.number(),
    used: z.number(),
  }),
  run_completed: z.object({ output: JsonValueSchema.optional() }),
  run_failed: z.object({ error: ErrorInfoSchema }),
  run_cancelled: z.object({ reason: z.string() }),
} as const;

export type EventType = keyof typeof EventDataSchemas;
export type EventData<T extends EventType> = z.infer<(typeof EventDataSchemas)[T]>;
export const EVENT_TYPES = Object.keys(EventDataSchemas) as EventType[];

/** Current version of each event type. Bump it, and add an upcaster, whenever a `data` schema changes shape. */
export const CURRENT_EVENT_VERSIONS: Record<EventType, number> = {
  run_requested: 3,
  run_started: 1,
  run_rejected: 1,
  thought: 2,
  tool_call_requested: 1,
  tool_call_completed: 1,
  tool_call_failed: 1,
  wait_requested: 1,
  signal_received: 1,
  timer_fired: 1,
  child_run_requested: 2,
  child_run_completed: 1,
  snapshot_taken: 1,
  budget_exceeded: 1,
  run_completed: 1,
  run_failed: 1,
  run_cancelled: 1,
};
