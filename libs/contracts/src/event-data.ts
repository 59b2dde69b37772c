import * as z from 'zod';
import { JsonObjectSchema, JsonValueSchema, RunIdSchema, ToolNameSchema } from './ids';
import { ConcurrencyKeySchema, RunRequestSchema, TenantSchema } from './run-request';
import { EditedResultSchema, ForkOfSchema } from './fork';
import { PromptRecordSchema } from './chat';
import { PayloadRefSchema } from './payload-ref';
import { BudgetLimitsSchema } from './run-request';

export const ErrorInfoSchema = z.object({
  code: z.string().min(1),
  message: z.string(),
  retryable: z.boolean().optional(),
});
export type ErrorInfo = z.infer<typeof ErrorInfoSchema>;

/** A call that must be approved (signal `approve` or `reject`) before it is dispatched. */
export const ApprovalPolicySchema = z.object({
  timeoutSeconds: z.number().positive().optional(),
  /** What happens when nobody answers in time. */
  onTimeout: z.enum(['reject', 'approve', 'fail']),
});
export type ApprovalPolicy = z.infer<typeof ApprovalPolicySchema>;

export const ToolCallSchema = z.object({
  callId: z.string().min(1),
  tool: ToolNameSchema,
  args: JsonObjectSchema,
  /** Arguments too large for an event: `args` is a stand-in (`{ $payload: uri }`); read them through this. */
  argsRef: PayloadRefSchema.optional(),
  /** The agent's policy for this tool: a human approves the call before it is dispatched. */
  approval: ApprovalPolicySchema.optional(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

/**
 * Tag of a code agent's journal, the JSON a code agent's `thought` carries as its `content`: each `ctx.model`
 * answer of the step is one of its entries (`{ k: "model", a: { content } }`), in the order the code asked.
 */
export const CODE_JOURNAL_TAG = 'dura.code/1';

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

/** What a run was started under; replicas decide only runs of a version they serve. */
export const PinnedVersionSchema = z.object({
  agent: z.string().min(1),
  version: z.string().min(1),
  promptVersion: z.string(),
  provider: z.string().min(1),
  model: z.string().min(1),
  /** The tools the agent may call (besides the control tools, when `controlTools`); others fail unrun. */
  tools: z.array(ToolNameSchema).optional(),
  controlTools: z.boolean().optional(),
});
export type PinnedVersion = z.infer<typeof PinnedVersionSchema>;

/** Schemas of each event's `data`, current version. Keys are the event types. */
export const EventDataSchemas = {
  run_requested: z.object({
    request: RunRequestSchema.extend({ runId: RunIdSchema }),
    /** Present when the run is a fork: its log starts with copies of the source's events up to `atSeq`. */
    forkOf: ForkOfSchema.optional(),
  }),
  run_started: z.object({
    pinned: PinnedVersionSchema.optional(),
    /** The limits in force: the agent's, lowered by the request's. */
    budget: BudgetLimitsSchema.optional(),
    budgetPolicy: z.enum(['fail', 'wait']).optional(),
    /**
     * The concurrency key the agent's definition gives the run, filled from its input once, here: absent when
     * the request names its own key (which wins) or the agent declares none.
     */
    concurrency: ConcurrencyKeySchema.optional(),
  }),
  run_rejected: z.object({
    error: ErrorInfoSchema,
    issues: z.array(z.string()).optional(),
    /** The tenant the refused request named, when it could be read: its callers see the refusal. */
    tenant: TenantSchema.optional(),
  }),
  thought: z.object({
    step: z.number().int().nonnegative(),
    model: ModelInfoSchema,
    content: z.string().optional(),
    decision: DecisionSchema,
    usage: UsageSchema,
    finishReason: z.string(),
    /** The model's input, content-addressed (only what is new since the previous call). */
    prompt: PromptRecordSchema.optional(),
    costUsd: z.number().nonnegative().optional(),
  }),
  budget_reserved: z.object({
    /** Worst case of the coming model call, held until its thought settles the real usage. */
    tokens: z.number().int().nonnegative(),
    costUsd: z.number().nonnegative(),
  }),
  context_summarized: z.object({
    /** Calls up to and including this step are replaced by `summary` in later model inputs. */
    throughStep: z.number().int().nonnegative(),
    summary: z.string(),
    model: ModelInfoSchema,
    usage: UsageSchema,
    costUsd: z.number().nonnegative().optional(),
  }),
  tool_call_requested: z.object({
    callId: z.string().min(1),
    step: z.number().int().positive(),
    tool: ToolNameSchema,
    args: JsonObjectSchema,
    idempotencyKey: z.string().min(1),
    /** Present when `args` were too large for the event: `args` is then a stand-in (`{ $payload: uri }`). */
    argsRef: PayloadRefSchema.optional(),
    approval: ApprovalPolicySchema.optional(),
  }),
  tool_call_completed: z.object({
    callId: z.string().min(1),
    idempotencyKey: z.string().min(1),
    result: JsonValueSchema,
    /** Present when the result was too large for the event: `result` is then null. */
    resultRef: PayloadRefSchema.optional(),
    attempt: z.number().int().positive(),
    deduped: z.boolean(),
    durationMs: z.number().nonnegative(),
    /** Present when a fork wrote this result in place of the recorded one (the call did not run again). */
    edited: EditedResultSchema.optional(),
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
    kind: z.enum(['signal', 'timer', 'child', 'operator', 'approval', 'budget']),
    signal: z.string().optional(),
    until: z.string().optional(),
    childRunId: RunIdSchema.optional(),
    /**
     * The call the wait belongs to: the unknown call of an `operator` wait, the call awaiting `approval`, or
     * the control call (`dura.sleep`, `dura.wait_for_signal`, `dura.run_agent`) the wait resolves.
     */
    callId: z.string().min(1).optional(),
    /** When the wait gives up (ISO time); `onTimeout` says what happens then. */
    timeoutAt: z.string().optional(),
    /**
     * A relative wait (a sleep of N s, a timeout of N s): its timer is due this many milliseconds after the
     * broker stored the intent of `callId`, whoever publishes the timer. `until`/`timeoutAt` then hold the
     * recording planner's reading of that time (for display; its clock may be off). Absent: the wait is due
     * at `until`/`timeoutAt` as recorded (a time the caller gave, or a wait recorded before v3).
     */
    delayMs: z.number().nonnegative().optional(),
    onTimeout: z.enum(['reject', 'approve', 'fail', 'continue']).optional(),
    /** Why an `operator` wait was opened, when it is not an unknown call (e.g. a code agent's non-determinism). */
    reason: z.string().optional(),
    /** A `signal` wait for a person's verdict (`ctx.approve`): only the payload `{ approved: true }` approves. */
    approval: z.boolean().optional(),
  }),
  signal_received: z.object({
    signalId: z.string().min(1),
    name: z.string().min(1),
    payload: JsonValueSchema.optional(),
  }),
  timer_fired: z.object({ waitId: z.string().min(1) }),
  child_run_requested: z.object({
    childRunId: RunIdSchema,
    request: RunRequestSchema,
    callId: z.string().min(1).optional(),
  }),
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
    /** What the run does: fail, or wait for an operator's `raise_budget` signal. */
    policy: z.enum(['fail', 'wait']).optional(),
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
  run_requested: 4,
  run_started: 3,
  run_rejected: 1,
  thought: 3,
  budget_reserved: 1,
  context_summarized: 1,
  tool_call_requested: 2,
  tool_call_completed: 3,
  tool_call_failed: 1,
  wait_requested: 3,
  signal_received: 2,
  timer_fired: 1,
  child_run_requested: 3,
  child_run_completed: 1,
  snapshot_taken: 1,
  budget_exceeded: 2,
  run_completed: 1,
  run_failed: 1,
  run_cancelled: 1,
};
