import * as z from 'zod';
import { configFields, configShapes, loadConfig, secretsConfigShape } from '@dura/service-kit';
import { mcpConfigShape } from '@dura/mcp';
import { httpRequestConfigShape } from '@dura/tools';
import { TENANT_MAX_RUNS_PATTERN } from './tenant-limits';
import { INLINE_TOOLS_PATTERN, tenantAgentsProblem } from './tool-authorization';
import { parseModelLimits } from './model-limits';

export const PlannerConfigSchema = z.object({
  ...configShapes.nats,
  PLANNER_CONCURRENCY: configFields.positiveInt
    .default(64)
    .describe(
      "Run messages the planner handles at once (a drive holds its run's message while a direct call runs).",
    ),
  PLANNER_DIRECT_CALLS: z
    .enum(['true', 'false'])
    .default('true')
    .transform((value) => value === 'true')
    .describe(
      'Hand tool calls straight to a gateway (`dura.call.<tool>`) and go on with the run from its answer; a call no gateway takes, or of a tool with a cross-replica limit or a timeout over 60 s, goes out as a tool task. `false`: every call is a tool task.',
    ),
  PLANNER_ACK_WAIT_MS: configFields.positiveInt
    .default(60_000)
    .describe(
      'How long JetStream waits for an ack before it redelivers a message (redelivery after a crash).',
    ),
  PLANNER_SNAPSHOT_EVERY: configFields.positiveInt
    .default(100)
    .describe('Events between snapshots of a run.'),
  PLANNER_CODE_CONTINUATIONS: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(1000)
    .describe(
      'Code-agent runs whose live execution the planner keeps between steps (least recently used dropped first, and any idle for 10 minutes); 0: every step replays the code from the start.',
    ),
  PLANNER_TENANT_MAX_RUNS: z
    .string()
    .regex(TENANT_MAX_RUNS_PATTERN, 'expected a list like "acme=10,*=100" (tenant or * = positive number)')
    .optional()
    .describe(
      'Runs in flight per tenant across all planners, e.g. `acme=10,*=100` (`*`: every other tenant); child runs are exempt. Unset: no limit.',
    ),
  PLANNER_TENANT_LIMIT_POLICY: z
    .enum(['wait', 'reject'])
    .default('wait')
    .describe(
      "A run over its tenant's limit: `wait` (stays queued in `dura.submit` until a run of the tenant ends) or `reject` (`run_rejected`, code `tenant_limit`).",
    ),
  DURA_MODEL_LIMITS: z
    .string()
    .optional()
    .transform((text, ctx) => parseModelLimits(text, ctx))
    .describe(
      'Model limits shared by every planner and worker, as JSON: `[{"model":"openai/gpt-4o-mini","requestsPerMinute":60,"inputTokensPerMinute":200000,"outputTokensPerMinute":20000,"concurrentCalls":10}]` (`tenant`: a name, or `*` for each tenant its own; `burstSeconds`; `headroomSeconds`, default 2, kept for calls in transit; `weights`: the shares of the tenants while calls wait in line). A call over a limit is a suspended wait. Unset: no limits (see Flow control).',
    ),
  DURA_MODEL_CALL_LEASE_MS: configFields.positiveInt
    .default(300_000)
    .describe(
      "How long a concurrent model call's slot is leased (renewed while the call is in flight): a process killed mid-call gives it back after this.",
    ),
  DURA_INLINE_PLANS: configFields.flag
    .describe(
      '`true`: requests may carry their own scripted plan (and `dura.run_agent` an inline child plan), calling any tool `DURA_INLINE_PLAN_TOOLS` allows. `false`: only registered agents run, each held to its tool list and approvals (production).',
    ),
  DURA_INLINE_PLAN_TOOLS: z
    .string()
    .regex(INLINE_TOOLS_PATTERN, 'expected tool names separated by commas, e.g. "echo,http.request", or "*"')
    .default('*')
    .describe('With inline plans on: the tools they may call, comma-separated; `*`: every registered tool.'),
  PLANNER_TENANT_AGENTS: z
    .string()
    .superRefine((text, ctx) => {
      const problem = tenantAgentsProblem(text);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional()
    .describe(
      'Agents each tenant may start, e.g. `acme=support|research@2,*=-` (`*`: every other tenant; value `*`: every agent, `-`: none). Unset: tenant `default` may start every agent and every other tenant none (its runs are rejected, naming this setting).',
    ),
  ...configShapes.streams,
  DURA_TOOLS_MODULES: z.string().optional().describe('Comma-separated modules exporting tools.'),
  ...secretsConfigShape,
  ...httpRequestConfigShape,
  ...mcpConfigShape,
  /** The agent definitions this planner serves: a JSON file or a module (see docs/agents.md). */
  DURA_AGENTS: z
    .string()
    .optional()
    .describe('Agent definitions: a JSON file or a module (see Agents); unset: scripted plans only.'),
  /** Tool arguments whose JSON is larger than this go to the object store; the event keeps a reference. */
  DURA_PAYLOAD_THRESHOLD_BYTES: configFields.positiveInt
    .default(65_536)
    .describe(
      'Tool arguments and results larger than this go to the object store; the event keeps a reference.',
    ),
  /** Appends one JSON line per scripted-model call: how fault tests prove no recorded decision is asked again. */
  DURA_SCRIPTED_MODEL_LOG: z
    .string()
    .optional()
    .describe('Appends one JSON line per scripted-model call to this file.'),
  ...configShapes.process,
});
export type PlannerConfig = z.infer<typeof PlannerConfigSchema>;

export function loadPlannerConfig(env?: Record<string, string | undefined>): PlannerConfig {
  return loadConfig('planner', PlannerConfigSchema, env);
}
