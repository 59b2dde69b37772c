import * as z from 'zod';
import { stepReferenceIssues } from '@dura/core';
import { CodeModelSettingsSchema } from '@dura/code-agents/engine';
import {
  ApprovalPolicySchema,
  BudgetLimitsSchema,
  ConcurrencyKeyTemplateSchema,
  JsonValueSchema,
  keyTemplateSecretIssue,
  ScriptedStepSchema,
  secretPathIssue,
  ToolNameSchema,
  type ScriptedStep,
} from '@dura/contracts';

/**
 * Steps a scripted agent asks for in one decision, as a model asking for parallel tool calls does: they are
 * dispatched together, numbered one after another, and may reference only the steps before the group.
 */
export const ParallelStepsSchema = z.strictObject({
  parallel: z.array(ScriptedStepSchema).min(2).max(100),
});

/** One entry of a scripted agent's plan: a step, or a group of steps asked for in one decision. */
export const PlanEntrySchema = z.union([ScriptedStepSchema, ParallelStepsSchema]);
export type PlanEntry = z.infer<typeof PlanEntrySchema>;

/** The calls one plan entry asks for, in step order. */
export function callsOf(entry: PlanEntry): readonly ScriptedStep[] {
  return 'parallel' in entry ? entry.parallel : [entry];
}

/** Where an agent's model answers: an OpenAI-compatible server, Anthropic, or the deterministic script. */
export const ModelSettingsSchema = z.discriminatedUnion('provider', [
  // The same settings a code agent declares (`defineAgent({ model })`), plus the context window.
  z.object({
    ...CodeModelSettingsSchema.shape,
    /** The model's context window in tokens; older steps are summarized before a call would outgrow it. */
    contextTokens: z.number().int().positive().default(128_000),
  }),
  z
    .object({
      provider: z.literal('scripted'),
      model: z.string().default('scripted'),
      steps: z.array(PlanEntrySchema).max(10_000),
      output: JsonValueSchema.optional(),
    })
    .superRefine(({ steps }, ctx) => {
      // A step may use the results of the steps before it; a parallel group's steps run together, so
      // none of them sees another's result.
      let before = 0;
      steps.forEach((entry, index) => {
        const calls = callsOf(entry);
        calls.forEach((step, i) => {
          const path = calls.length > 1 ? `steps.${index}.parallel.${i}` : `steps.${index}`;
          for (const message of stepReferenceIssues(step, before, path))
            ctx.addIssue({ code: 'custom', message, path: [] });
        });
        before += calls.length;
      });
    }),
]);
export type ModelSettings = z.infer<typeof ModelSettingsSchema>;

/** A price per million tokens, in US dollars, for input and output. */
export const ModelPriceSchema = z.object({
  inputPerMTokUsd: z.number().nonnegative(),
  outputPerMTokUsd: z.number().nonnegative(),
});
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/** An agent, declared once: runs name it (and optionally its version) and are pinned to what they started on. */
export const AgentDefinitionSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z][a-z0-9_.-]*$/, 'agent name must be lower-case letters, digits, ".", "_", "-"'),
    version: z.string().min(1).max(50),
    description: z.string().optional(),
    systemPrompt: z.string().default(''),
    /** Changes whenever the prompt does; defaults to a hash of `systemPrompt`. */
    promptVersion: z.string().min(1).optional(),
    model: ModelSettingsSchema,
    /** Tools the model may call; the built-in control tools (`dura.sleep`, …) are allowed unless `controlTools` is false. */
    tools: z.array(ToolNameSchema).default([]),
    controlTools: z.boolean().default(true),
    budget: BudgetLimitsSchema.optional(),
    /** When a budget would be exceeded: fail the run, or wait for an operator's `raise_budget` signal. */
    onBudgetExceeded: z.enum(['fail', 'wait']).default('fail'),
    /**
     * Input fields that hold secrets (dot paths, `*` every element), beyond those a scripted plan passes to a
     * tool's secret field (found by itself): sealed before the run's input is recorded. A model sees them
     * sealed and can only pass them on to a tool field declared secret, where the gateway opens them.
     */
    secrets: z
      .strictObject({
        input: z
          .array(z.string().superRefine((path, ctx) => issueOf(path, ctx)))
          .min(1)
          .max(100),
      })
      .optional(),
    /**
     * At most `limit` runs of one key take steps at once; `key` is filled from each run's input
     * (`"customer:{{input.customerId}}"`). A request's own `concurrency` wins over it.
     */
    concurrency: ConcurrencyKeyTemplateSchema.optional(),
    /** Tools whose calls a human approves first (signal `approve` / `reject`). */
    approvals: z
      .object({ tools: z.array(ToolNameSchema).min(1) })
      .extend(ApprovalPolicySchema.partial().shape)
      .optional(),
  })
  .superRefine((agent, ctx) => {
    const issue =
      agent.concurrency && keyTemplateSecretIssue(agent.concurrency.key, agent.secrets?.input ?? []);
    if (issue) ctx.addIssue({ code: 'custom', message: issue, path: ['concurrency', 'key'] });
  });
export type AgentDefinition = z.infer<typeof AgentDefinitionSchema>;

/** The file `DURA_AGENTS` points at (JSON), or the default export of a module. */
export const AgentsFileSchema = z.object({
  agents: z.array(AgentDefinitionSchema),
  /** Prices by model id, for cost budgets; a model without a price costs 0 (and cost limits cannot bind). */
  prices: z.record(z.string(), ModelPriceSchema).default({}),
});
export type AgentsFile = z.input<typeof AgentsFileSchema>;

function issueOf(path: string, ctx: z.RefinementCtx): void {
  const issue = secretPathIssue(path);
  if (issue) ctx.addIssue({ code: 'custom', message: issue });
}
