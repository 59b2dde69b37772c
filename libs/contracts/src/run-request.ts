import * as z from 'zod';
import { JsonObjectSchema, JsonValueSchema, RunIdSchema, ToolNameSchema } from './ids';

/** Wire version of run requests. A new version must keep accepting the old one (parse both, upgrade on intake). */
export const RUN_REQUEST_VERSION = 1;

/**
 * One step of a scripted plan. String values inside `args` may reference earlier results:
 * `"$steps.1.imageTag"` is the `imageTag` field of step 1's result (steps count from 1),
 * and `"$input.name"` reads the run's input.
 */
export const ScriptedStepSchema = z.object({
  tool: ToolNameSchema,
  args: JsonObjectSchema,
});
export type ScriptedStep = z.infer<typeof ScriptedStepSchema>;

/**
 * A step of an inline plan: one call. `{ "parallel": [...] }` groups belong to scripted agents in an agents
 * file; sent inline they get a message that says so, instead of "expected string" for `tool`.
 */
const InlineStepSchema = z.preprocess((value, ctx) => {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'parallel' in value) {
    ctx.addIssue({
      code: 'custom',
      input: value,
      message:
        'a "parallel" group is not an inline plan step: send one call per step ({"tool", "args"}), or define a scripted agent with parallel groups in an agents file (docs/agents.md)',
    });
    return z.NEVER;
  }
  return value;
}, ScriptedStepSchema);

/** The deterministic model: its whole plan arrives with the request, so demos and tests never call a real LLM. */
export const ScriptedAgentSchema = z.object({
  kind: z.literal('scripted'),
  steps: z.array(InlineStepSchema).max(10_000),
  output: JsonValueSchema.optional(),
});
export type ScriptedAgent = z.infer<typeof ScriptedAgentSchema>;

/**
 * A registered agent, by name: the planner's agent registry holds its prompt, model, tools, budgets and
 * policies. Without `version`, the newest version the planners serve is used and pinned for the run.
 */
export const AgentRefSchema = z.object({
  kind: z.literal('agent'),
  name: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[a-z][a-z0-9_.-]*$/, 'agent name must be lower-case letters, digits, ".", "_" or "-"'),
  version: z.string().min(1).max(50).optional(),
});
export type AgentRef = z.infer<typeof AgentRefSchema>;

export const AgentSpecSchema = z.discriminatedUnion('kind', [ScriptedAgentSchema, AgentRefSchema]);
export type AgentSpec = z.infer<typeof AgentSpecSchema>;

export const MAX_RUN_TAGS = 20;
export const MAX_TAG_LENGTH = 64;
export const MAX_METADATA_KEYS = 50;

/** A label to find runs by (`GET /runs?tag=`): 1 to 64 characters. */
export const RunTagSchema = z
  .string()
  .min(1, 'a tag must not be empty')
  .max(MAX_TAG_LENGTH, `a tag has at most ${MAX_TAG_LENGTH} characters`);

/** Labels of the run; a run matches a tag filter when it carries every tag asked for. */
export const RunTagsSchema = z
  .array(RunTagSchema, {
    error: (issue) =>
      issue.input !== null && typeof issue.input === 'object'
        ? 'tags must be a list of strings; put key/value pairs in metadata'
        : undefined,
  })
  .max(MAX_RUN_TAGS, `a run has at most ${MAX_RUN_TAGS} tags`);

/** Free key/value strings that travel with the run and come back in its summary. */
export const RunMetadataSchema = z
  .record(z.string().min(1, 'a metadata key must not be empty'), z.string())
  .refine((metadata) => Object.keys(metadata).length <= MAX_METADATA_KEYS, {
    message: `metadata has at most ${MAX_METADATA_KEYS} keys`,
  });

/**
 * Limits a run may not exceed; checked before anything is spent. A request may set its own, within the
 * agent's (the lower of the two wins).
 */
export const BudgetLimitsSchema = z.object({
  maxSteps: z.number().int().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  maxCostUsd: z.number().positive().optional(),
  maxWallSeconds: z.number().positive().optional(),
});
export type BudgetLimits = z.infer<typeof BudgetLimitsSchema>;

/** Set by the planner on a child run's request: the parent run and the call waiting for the child. */
export const ParentRefSchema = z.object({ runId: RunIdSchema, callId: z.string().min(1) });
export type ParentRef = z.infer<typeof ParentRefSchema>;

/** The tenant of a run that names none (every run before tenants existed belongs to it). */
export const DEFAULT_TENANT = 'default';

/**
 * Who a run belongs to: the read API shows a caller only its own tenant's runs. Letters, digits, "_" and "-",
 * at most 64, so it can become a NATS subject token should subjects ever be namespaced per tenant.
 */
export const TenantSchema = z
  .string()
  .min(1, 'a tenant must not be empty')
  .max(64, 'a tenant has at most 64 characters')
  .regex(/^[A-Za-z0-9_-]+$/, 'a tenant may contain only letters, digits, "_" and "-"');

/** At most `limit` runs of `key` (e.g. `customer:42`) take steps at once; a run over it waits, in order. */
export const ConcurrencyKeySchema = z.object({
  key: z.string().min(1).max(200),
  limit: z.number().int().min(1).max(10_000),
});
export type ConcurrencyKey = z.infer<typeof ConcurrencyKeySchema>;

/** A run's priority among runs waiting for the same capacity: higher first. */
export const PrioritySchema = z
  .number()
  .int('a priority is a whole number')
  .min(-100, 'a priority is at least -100')
  .max(100, 'a priority is at most 100');

/** What a client publishes on `dura.submit`. `runId` doubles as the submit idempotency key. */
export const RunRequestSchema = z.object({
  v: z.literal(RUN_REQUEST_VERSION),
  runId: RunIdSchema.optional(),
  agent: AgentSpecSchema,
  input: JsonValueSchema.optional(),
  tags: RunTagsSchema.optional(),
  metadata: RunMetadataSchema.optional(),
  budget: BudgetLimitsSchema.optional(),
  parent: ParentRefSchema.optional(),
  /** Absent means `DEFAULT_TENANT`; a child run always belongs to its parent's tenant. */
  tenant: TenantSchema.optional(),
  /** Runs sharing a key take steps at most `limit` at a time (the agent's own key applies when absent). */
  concurrency: ConcurrencyKeySchema.optional(),
  /** Among runs waiting for the same model limit, higher goes first (-100 to 100, default 0). */
  priority: PrioritySchema.optional(),
});
export type RunRequest = z.infer<typeof RunRequestSchema>;
