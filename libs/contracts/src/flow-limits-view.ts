import * as z from 'zod';

/** What a planner declared for one limit (`DURA_MODEL_LIMITS`), or a concurrency key's limit. */
export const DeclaredLimitSchema = z.object({
  requestsPerMinute: z.number().optional(),
  inputTokensPerMinute: z.number().optional(),
  outputTokensPerMinute: z.number().optional(),
  concurrentCalls: z.number().optional(),
});
export type DeclaredLimit = z.infer<typeof DeclaredLimitSchema>;

/** One limit as operators see it: what it limits, what is declared, and its state now. */
export const FlowLimitRowSchema = z.object({
  /** The shared entry's key: `provider/model`, `provider/model@tenant`, or `key:<concurrency key>`. */
  key: z.string(),
  kind: z.enum(['model', 'concurrency key']),
  model: z.string().optional(),
  /** The tenant a model limit applies to; `*` for a per-tenant declaration no tenant has used yet. */
  tenant: z.string().optional(),
  concurrencyKey: z.string().optional(),
  /** Absent: no planner declares it now (its entry outlives the declaration until its TTL). */
  declared: DeclaredLimitSchema.optional(),
  /** Per declared rate, the share of its bucket available now (0 to 1; below 0: tickets handed out ahead). */
  available: z.object({
    requests: z.number().optional(),
    input: z.number().optional(),
    output: z.number().optional(),
  }),
  /** Slots held now (concurrent calls, or runs inside a concurrency key), and the limit when known. */
  slots: z.object({ inUse: z.number().int(), limit: z.number().int().optional() }),
  /** Callers waiting: for a slot (`queue`), in the rate's line (`line`), and by tenant when known. */
  waiting: z.object({
    total: z.number().int(),
    queue: z.number().int(),
    line: z.number().int(),
    byTenant: z.record(z.string(), z.number().int()),
  }),
  /** A provider's 429 in force: the rate is lowered to `factor` of it until `until`. */
  throttle: z.object({ factor: z.number(), until: z.string() }).optional(),
});
export type FlowLimitRow = z.infer<typeof FlowLimitRowSchema>;

/** `GET /flow/limits`: every limit declared or in use, and what is wrong with the declarations. */
export const FlowLimitsResponseSchema = z.object({
  /** When the state was read (ISO). */
  at: z.string(),
  limits: z.array(FlowLimitRowSchema),
  /** Misconfigurations operators must fix, e.g. replicas declaring different figures for a limit. */
  warnings: z.array(z.string()),
});
export type FlowLimitsResponse = z.infer<typeof FlowLimitsResponseSchema>;
