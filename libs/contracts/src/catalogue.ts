import * as z from 'zod';
import { ToolNameSchema } from './ids';
import { ConcurrencyKeyTemplateSchema } from './concurrency-key';

/**
 * The catalogue: what the running services serve, announced by them into the KV bucket `dura_catalogue`
 * (`BUCKETS.catalogue`) so that the API can list it. Planners write one entry per agent version they serve
 * (`agent.<name>.<version>`), gateways one per tool they run (`tool.<name>`); each entry is written again
 * while its service runs, and expires (the bucket's TTL) once no running service announces it.
 */
export const CATALOGUE_VERSION = 1;

/** How an agent decides: a scripted plan declared in JSON, a model (LLM), or a program over `ctx` (code). */
export const AGENT_KINDS = ['json', 'llm', 'code'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

/** A JSON Schema document, as `z.toJSONSchema` writes it (or an MCP server gives it). */
const JsonSchemaSchema = z.record(z.string(), z.unknown());

/**
 * Which tenants may start an agent version, as the announcing planner's policy (`PLANNER_TENANT_AGENTS`) says:
 * a tenant named in `tenants` by that entry, every other tenant by `otherTenants`.
 */
export const AgentAccessSchema = z.object({
  tenants: z.record(z.string(), z.boolean()),
  otherTenants: z.boolean(),
});
export type AgentAccess = z.infer<typeof AgentAccessSchema>;

/** One agent version in the catalogue. */
export const CatalogueAgentSchema = z.object({
  v: z.literal(CATALOGUE_VERSION),
  name: z.string().regex(/^[a-z][a-z0-9_.-]*$/),
  version: z.string().min(1).max(50),
  kind: z.enum(AGENT_KINDS),
  description: z.string().max(4000).optional(),
  /** The run input's JSON Schema, when the agent declares an input schema. */
  inputSchema: JsonSchemaSchema.optional(),
  /** The tools the agent may call. */
  tools: z.array(ToolNameSchema),
  /** The concurrency key its runs hold, as a template over their input (a request's own key wins). */
  concurrency: ConcurrencyKeyTemplateSchema.optional(),
  access: AgentAccessSchema,
  announcedAt: z.iso.datetime(),
});
export type CatalogueAgent = z.infer<typeof CatalogueAgentSchema>;

export const TOOL_SAFETY_CLASSES = ['read_only', 'idempotent', 'unsafe'] as const;

/** What bounds a tool's calls, as the announcing gateway applies it. */
export const ToolLimitsSchema = z.object({
  /** Calls that may run at once across every gateway; absent: no limit. */
  concurrency: z.number().int().positive().optional(),
  /** Upper bound of one attempt. */
  timeoutMs: z.number().int().positive(),
  /** Attempts in all for a retryable failure, the first included. */
  attempts: z.number().int().positive(),
  /** Whether a human approves each call first, and what happens when nobody answers in time. */
  approval: z.object({
    required: z.boolean(),
    timeoutSeconds: z.number().positive().optional(),
    onTimeout: z.enum(['reject', 'approve', 'fail']).optional(),
  }),
});
export type ToolLimits = z.infer<typeof ToolLimitsSchema>;

/** One tool in the catalogue. */
export const CatalogueToolSchema = z.object({
  v: z.literal(CATALOGUE_VERSION),
  name: ToolNameSchema,
  description: z.string().max(4000),
  safety: z.enum(TOOL_SAFETY_CLASSES),
  inputSchema: JsonSchemaSchema.optional(),
  limits: ToolLimitsSchema,
  announcedAt: z.iso.datetime(),
});
export type CatalogueTool = z.infer<typeof CatalogueToolSchema>;

/** `GET /agents`: every agent the caller's tenant may start, each with its versions (oldest first). */
export const AgentListSchema = z.object({
  agents: z.array(
    z.object({
      name: z.string(),
      versions: z.array(CatalogueAgentSchema.omit({ v: true, name: true, access: true })),
    }),
  ),
});
export type AgentList = z.infer<typeof AgentListSchema>;

/** `GET /tools`: every tool the gateways run. */
export const ToolListSchema = z.object({ tools: z.array(CatalogueToolSchema.omit({ v: true })) });
export type ToolList = z.infer<typeof ToolListSchema>;

/** Whether `tenant` may start the agent version whose access is `access`. */
export function mayStart(access: AgentAccess, tenant: string): boolean {
  return access.tenants[tenant] ?? access.otherTenants;
}

/** A key part for any name: letters, digits, `_` and `-` as they are, every other character as `=XX`. */
function keyPart(text: string): string {
  return [...new TextEncoder().encode(text)]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return /[A-Za-z0-9_-]/.test(char) ? char : `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

/** The catalogue key of an agent version (planners write under `agent.>`). */
export const catalogueAgentKey = (name: string, version: string): string =>
  `agent.${keyPart(name)}.${keyPart(version)}`;

/** The catalogue key of a tool (gateways write under `tool.>`). */
export const catalogueToolKey = (name: string): string => `tool.${keyPart(name)}`;
