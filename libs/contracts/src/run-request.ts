import { z } from 'zod';
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

/** The deterministic model: its whole plan arrives with the request, so demos and tests never call a real LLM. */
export const ScriptedAgentSchema = z.object({
  kind: z.literal('scripted'),
  steps: z.array(ScriptedStepSchema).max(10_000),
  output: JsonValueSchema.optional(),
});
export type ScriptedAgent = z.infer<typeof ScriptedAgentSchema>;

export const AgentSpecSchema = z.discriminatedUnion('kind', [ScriptedAgentSchema]);
export type AgentSpec = z.infer<typeof AgentSpecSchema>;

/** What a client publishes on `dura.submit`. `runId` doubles as the submit idempotency key. */
export const RunRequestSchema = z.object({
  v: z.literal(RUN_REQUEST_VERSION),
  runId: RunIdSchema.optional(),
  agent: AgentSpecSchema,
  input: JsonValueSchema.optional(),
  tags: z.record(z.string(), z.string()).optional(),
});
export type RunRequest = z.infer<typeof RunRequestSchema>;
