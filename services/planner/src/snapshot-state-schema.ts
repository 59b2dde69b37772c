import * as z from 'zod';
import {
  BudgetLimitsSchema,
  ConcurrencyKeySchema,
  PayloadRefSchema,
  PinnedVersionSchema,
  DecisionSchema,
  ErrorInfoSchema,
  RunIdSchema,
  TenantSchema,
  UsageSchema,
  waitStateShape,
  type JsonObject,
  type JsonValue,
  type RunRequest,
} from '@dura/contracts';
import type {
  BudgetState,
  CallState,
  ChildRunState,
  OperatorVerdict,
  PromptState,
  RunState,
  TurnState,
  WaitState,
} from '@dura/core';

// The shapes below must list exactly the keys of core's RunState, CallState and WaitState: `satisfies` makes
// the build fail here when core adds, drops or retypes a field. When that happens, update the schema AND bump
// SNAPSHOT_VERSION (snapshot-codec.ts), so snapshots folded by the old code are ignored rather than trusted.
type ShapeOf<T> = { [K in keyof Required<T>]: z.ZodType<T[K]> };

const seq = z.number().int().positive();

// Values that came into the state from events the intake and the gateway already validated (tool
// arguments and results, signal payloads, the request's plan). The snapshot's hash proves the stored bytes
// are what a planner wrote; checking every value of a long run again cost a resume tens of milliseconds.
const jsonValue = z.custom<JsonValue>((value) => value !== undefined, 'must be a JSON value');
const jsonObject = z.custom<JsonObject>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  'must be a JSON object',
);
const request = z.custom<RunRequest & { runId: string }>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    RunIdSchema.safeParse((value as { runId?: unknown }).runId).success &&
    typeof (value as { agent?: unknown }).agent === 'object',
  'must be a run request with a run id',
);
const count = z.number().int().nonnegative();

const operatorShape = {
  action: z.enum(['confirm', 'skip']),
  signalId: z.string().min(1),
  result: jsonValue.optional(),
} satisfies ShapeOf<OperatorVerdict>;

const callShape = {
  callId: z.string().min(1),
  step: z.number().int().positive(),
  tool: z.string().min(1),
  args: jsonObject,
  idempotencyKey: z.string().min(1),
  status: z.enum(['pending', 'completed', 'failed', 'unknown']),
  attempts: count,
  requestedSeq: seq,
  intentId: z.string().min(1),
  resolvedSeq: seq.optional(),
  result: jsonValue.optional(),
  error: ErrorInfoSchema.optional(),
  failRun: z.boolean().optional(),
  operator: z.strictObject(operatorShape).optional(),
  requestedAt: z.string().optional(),
  argsRef: PayloadRefSchema.optional(),
  resultRef: PayloadRefSchema.optional(),
  approval: z
    .strictObject({
      timeoutSeconds: z.number().positive().optional(),
      onTimeout: z.enum(['reject', 'approve', 'fail']),
      decision: z.enum(['approved', 'rejected']).optional(),
    })
    .optional(),
} satisfies ShapeOf<CallState>;

// The read API's wait, with a non-empty id and the delay of a relative wait (which the read API leaves out).
const waitShape = {
  ...waitStateShape,
  waitId: z.string().min(1),
  delayMs: z.number().nonnegative().optional(),
} satisfies ShapeOf<WaitState>;

const budgetShape = {
  limits: BudgetLimitsSchema,
  policy: z.enum(['fail', 'wait']),
  reserved: z.strictObject({ tokens: count, costUsd: z.number().nonnegative() }).nullable(),
  costUsd: z.number().nonnegative(),
  startedAt: z.string().nullable(),
} satisfies ShapeOf<BudgetState>;

const childShape = {
  childRunId: RunIdSchema,
  callId: z.string(),
  request,
  status: z.enum(['running', 'completed', 'failed', 'cancelled']),
} satisfies ShapeOf<ChildRunState>;

const runShape = {
  // A snapshot is only ever taken of a run that has events, so its run id is known.
  runId: RunIdSchema,
  status: z.enum(['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'rejected']),
  request: request.nullable(),
  tenant: TenantSchema,
  correlationId: z.string().nullable(),
  lastSeq: seq,
  eventCount: z.number().int().positive(),
  steps: count,
  decisions: count,
  openDecision: z.strictObject({ seq, decision: DecisionSchema }).nullable(),
  calls: z.array(z.strictObject(callShape)),
  usage: UsageSchema,
  waiting: z.strictObject(waitShape).nullable(),
  waits: z.array(z.strictObject(waitShape)),
  pinned: PinnedVersionSchema.nullable(),
  concurrency: ConcurrencyKeySchema.optional(),
  budget: z.strictObject(budgetShape),
  turns: z.array(
    z.strictObject({
      content: z.string().optional(),
      callIds: z.array(z.string()),
    } satisfies ShapeOf<TurnState>),
  ),
  prompt: z
    .strictObject({
      hash: z.string(),
      turns: count,
      summaryThrough: count.nullable(),
    } satisfies ShapeOf<PromptState>)
    .nullable(),
  summary: z.strictObject({ throughStep: count, text: z.string() }).nullable(),
  children: z.array(z.strictObject(childShape)),
  signals: z.array(
    z.strictObject({
      signalId: z.string().min(1),
      name: z.string(),
      payload: jsonValue.optional(),
      seq,
    }),
  ),
  output: jsonValue.optional(),
  error: ErrorInfoSchema.optional(),
  createdAt: z.string().nullable(),
  updatedAt: z.string().nullable(),
} satisfies ShapeOf<RunState>;

/** A folded run state as a snapshot stores it: strict, so a state of another shape is refused, not guessed at. */
export const SnapshotStateSchema = z.strictObject(runShape);
