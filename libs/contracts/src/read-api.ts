// The projector's HTTP read API: the shape of every JSON response. The projector serves them and generates
// its OpenAPI document from them; the client SDK validates what it reads against them.
import * as z from 'zod';
import {
  ApprovalPolicySchema,
  DecisionSchema,
  ErrorInfoSchema,
  EVENT_TYPES,
  EventDataSchemas,
  PinnedVersionSchema,
  UsageSchema,
} from './event-data';
import { PayloadRefSchema } from './payload-ref';
import { EventMetaSchema, type RunEvent } from './envelope';
import { JsonObjectSchema, JsonValueSchema, RunIdSchema } from './ids';
import {
  BudgetLimitsSchema,
  ConcurrencyKeySchema,
  DEFAULT_TENANT,
  RunRequestSchema,
  RunTagsSchema,
  RunMetadataSchema,
  TenantSchema,
} from './run-request';

/** Lifecycle statuses a run can have once its log holds an event. */
export const RUN_STATUSES = [
  'pending',
  'running',
  'waiting',
  'completed',
  'failed',
  'cancelled',
  'rejected',
] as const;
export const RunStatusSchema = z.enum(RUN_STATUSES);

/** `GET /runs?sort=`: newest activity first (default), newest or oldest run first. */
export const RUN_LIST_SORTS = ['updated_desc', 'created_desc', 'created_asc'] as const;
export const RunListSortSchema = z.enum(RUN_LIST_SORTS);
export const RUN_LIST_DEFAULT_LIMIT = 50;
export const RUN_LIST_MAX_LIMIT = 500;

const seq = z.number().int().nonnegative();

/** One run in a list: what its folded state says, flattened for tables and filters. */
export const RunSummarySchema = z.object({
  runId: RunIdSchema,
  status: RunStatusSchema,
  /** Time of the run's first event (ISO 8601). */
  createdAt: z.string(),
  /** Time of the run's latest event (ISO 8601). */
  updatedAt: z.string(),
  /** Tool calls requested so far. */
  steps: z.number().int().nonnegative(),
  /** Calls requested and not resolved yet (including those whose outcome an operator must settle). */
  pendingCalls: z.number().int().nonnegative(),
  /** The run's error when it failed or was rejected, else its latest tool-call error not followed by success. */
  lastError: ErrorInfoSchema.pick({ code: true, message: true }).nullable(),
  /** Model tokens over all of the run's thoughts. */
  usage: UsageSchema,
  tags: RunTagsSchema,
  metadata: RunMetadataSchema,
  /** Stream sequence of the run's latest event. */
  lastSeq: seq,
  /** The run's tenant. */
  tenant: z.string().optional(),
  /** `scripted`, or the agent's name with the version the run is pinned to (`triage@3`). */
  agent: z.string().optional(),
  /** The run that started this one as a child. */
  parentRunId: RunIdSchema.nullable().optional(),
  /** How many child runs this run started. */
  children: z.number().int().nonnegative().optional(),
  /** Model spend so far, in US dollars (0 when the agents file gives no prices). */
  costUsd: z.number().nonnegative().optional(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

/** `GET /runs`: one page; pass `nextCursor` back as `cursor` for the next one (absent on the last page). */
export const RunListResponseSchema = z.object({
  runs: z.array(RunSummarySchema),
  nextCursor: z.string().optional(),
});
export type RunListResponse = z.infer<typeof RunListResponseSchema>;

function eventSchemaOf(type: (typeof EVENT_TYPES)[number]) {
  return z.object({
    type: z.literal(type),
    v: z.number().int().positive(),
    data: EventDataSchemas[type],
    meta: EventMetaSchema,
    /** The event's sequence in the runs stream, stamped on read. */
    seq: z.number().int().positive(),
  });
}

/** An event as readers see it: upcast to the current version of its type, with its stream sequence. */
export const RunEventSchema = z.discriminatedUnion(
  'type',
  EVENT_TYPES.map(eventSchemaOf) as unknown as [
    ReturnType<typeof eventSchemaOf>,
    ...ReturnType<typeof eventSchemaOf>[],
  ],
) as unknown as z.ZodType<RunEvent>;

/** `GET /runs/:id/events`: events in stream order; `nextFromSeq` is where the next page starts. */
export const EventPageResponseSchema = z.object({
  events: z.array(RunEventSchema),
  nextFromSeq: seq.optional(),
});
export type EventPageResponse = z.infer<typeof EventPageResponseSchema>;

const CallStateSchema = z.object({
  callId: z.string(),
  step: z.number().int().positive(),
  tool: z.string(),
  args: JsonObjectSchema,
  idempotencyKey: z.string(),
  /** `unknown`: an unsafe call was interrupted and nobody knows whether it took effect; an operator decides. */
  status: z.enum(['pending', 'completed', 'failed', 'unknown']),
  attempts: z.number().int().nonnegative(),
  requestedSeq: seq,
  intentId: z.string(),
  resolvedSeq: seq.optional(),
  result: JsonValueSchema.optional(),
  error: ErrorInfoSchema.optional(),
  failRun: z.boolean().optional(),
  operator: z
    .object({
      action: z.enum(['confirm', 'skip']),
      signalId: z.string(),
      result: JsonValueSchema.optional(),
    })
    .optional(),
  requestedAt: z.string().optional(),
  argsRef: PayloadRefSchema.optional(),
  resultRef: PayloadRefSchema.optional(),
  approval: ApprovalPolicySchema.extend({ decision: z.enum(['approved', 'rejected']).optional() }).optional(),
});

/** A run's wait as the read API returns it; the planner's snapshot schema checks the same fields. */
export const waitStateShape = {
  waitId: z.string(),
  kind: z.enum(['signal', 'timer', 'child', 'operator', 'approval', 'budget']),
  signal: z.string().optional(),
  until: z.string().optional(),
  childRunId: z.string().optional(),
  callId: z.string().optional(),
  timeoutAt: z.string().optional(),
  onTimeout: z.enum(['reject', 'approve', 'fail', 'continue']).optional(),
  reason: z.string().optional(),
  /** A signal wait for a person's verdict (`ctx.approve`): only the payload `{ approved: true }` approves. */
  approval: z.boolean().optional(),
};

const WaitStateSchema = z.object(waitStateShape);

const BudgetStateSchema = z.object({
  limits: BudgetLimitsSchema,
  policy: z.enum(['fail', 'wait']),
  reserved: z.object({ tokens: z.number(), costUsd: z.number() }).nullable(),
  costUsd: z.number(),
  startedAt: z.string().nullable(),
});

const ChildRunStateSchema = z.object({
  childRunId: RunIdSchema,
  callId: z.string(),
  request: RunRequestSchema.extend({ runId: RunIdSchema }),
  status: z.enum(['running', 'completed', 'failed', 'cancelled']),
});

/** The fold of a run's log (`fold` in @dura/core): the same value every component computes. */
export const RunStateSchema = z.object({
  runId: RunIdSchema.nullable(),
  status: z.enum(['none', ...RUN_STATUSES]),
  request: RunRequestSchema.extend({ runId: RunIdSchema }).nullable(),
  /** Absent in a state stored before runs had tenants: those runs belong to the default tenant. */
  tenant: TenantSchema.default(DEFAULT_TENANT),
  correlationId: z.string().nullable(),
  /** Stream sequence of the last event folded in. */
  lastSeq: seq,
  eventCount: z.number().int().nonnegative(),
  steps: z.number().int().nonnegative(),
  decisions: z.number().int().nonnegative(),
  openDecision: z.object({ seq, decision: DecisionSchema }).nullable(),
  calls: z.array(CallStateSchema),
  usage: UsageSchema,
  waiting: WaitStateSchema.nullable(),
  waits: z.array(WaitStateSchema),
  pinned: PinnedVersionSchema.nullable(),
  /** The concurrency key the agent's definition gave the run (the request's, when it names one, wins). */
  concurrency: ConcurrencyKeySchema.optional(),
  budget: BudgetStateSchema,
  turns: z.array(z.object({ content: z.string().optional(), callIds: z.array(z.string()) })),
  prompt: z
    .object({ hash: z.string(), turns: z.number().int(), summaryThrough: z.number().int().nullable() })
    .nullable(),
  summary: z.object({ throughStep: z.number().int().nonnegative(), text: z.string() }).nullable(),
  children: z.array(ChildRunStateSchema),
  signals: z.array(
    z.object({ signalId: z.string(), name: z.string(), payload: JsonValueSchema.optional(), seq }),
  ),
  output: JsonValueSchema.optional(),
  error: ErrorInfoSchema.optional(),
  createdAt: z.string().nullable(),
  updatedAt: z.string().nullable(),
});

/**
 * `GET /runs/:id?calls=none`: the run's state without its per-call list (a long run's is most of it), for a
 * reader that shows the run before it needs its calls. Every other field is the full state's.
 */
export const RunStateSummarySchema = RunStateSchema.omit({ calls: true });

/** `GET /runs/:id`'s query: `calls=all` (the default) is the full state, `calls=none` leaves the calls out. */
export const RunStateQuerySchema = z.object({ calls: z.enum(['all', 'none']).default('all') });

/** `GET /runs/:id/state?at=SEQ`: the fold of the run's events with `seq <= at`. */
export const StateAtResponseSchema = z.object({
  runId: RunIdSchema,
  at: seq,
  state: RunStateSchema,
});

/** `GET /runs/:id/events/:seq/causes`: that event, then its cause (`meta.causationId`), and so on to the root. */
export const CausesResponseSchema = z.object({ chain: z.array(RunEventSchema).min(1) });

/** Data of the `end` message of `GET /runs/:id/stream`, sent after the run's terminal event. */
export const StreamEndSchema = z.object({ status: RunStatusSchema });

/** Every error answer (400, 404, 500): `code` is stable and machine-readable, `message` says what to do. */
export const ApiErrorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string() }),
});
export type ApiErrorBody = z.infer<typeof ApiErrorSchema>;
