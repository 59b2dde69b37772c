import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { CONFIG_ERROR_CODE, DuraError, formatIssues } from '@dura/contracts';

/** A server's name becomes the middle word of its tools' names (`mcp.<server>.<tool>`). */
export const McpServerNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,39}$/, 'a server name is a lower-case word (letters, digits, "_", "-")');

/** A header or environment value: literal, or read from the deployment's environment or a mounted file. */
const SecretValueSchema = z.union([
  z.string(),
  z.object({ env: z.string().min(1).describe('read from this environment variable') }).strict(),
  z.object({ file: z.string().min(1).describe('read from this file (trailing newline dropped)') }).strict(),
]);
export type SecretValue = z.infer<typeof SecretValueSchema>;

/** Per-tool settings that win over what the server's annotations imply. */
export const McpToolOverrideSchema = z
  .object({
    safety: z.enum(['read_only', 'idempotent', 'unsafe']).optional(),
    timeoutMs: z.number().int().positive().optional(),
    requiresApproval: z.boolean().optional(),
    concurrency: z.number().int().positive().optional(),
    secrets: z
      .object({ args: z.array(z.string()).optional(), result: z.array(z.string()).optional() })
      .strict()
      .optional(),
    /** Leave this tool out: agents never see it. */
    hidden: z.boolean().optional(),
  })
  .strict();
export type McpToolOverride = z.infer<typeof McpToolOverrideSchema>;

const common = {
  /** Upper bound of one call (default 60 s); the server is sent `notifications/cancelled` when it passes. */
  timeoutMs: z.number().int().positive().optional(),
  /** Overrides by the server's own tool name. */
  tools: z.record(z.string(), McpToolOverrideSchema).optional(),
};

const StdioServerSchema = z
  .object({
    transport: z.literal('stdio'),
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), SecretValueSchema).optional(),
    cwd: z.string().optional(),
    ...common,
  })
  .strict();

const HttpServerSchema = z
  .object({
    transport: z.literal('http'),
    url: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string(), SecretValueSchema).optional(),
    ...common,
  })
  .strict();

export const McpServerConfigSchema = z.discriminatedUnion('transport', [StdioServerSchema, HttpServerSchema]);
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

/** `DURA_MCP_SERVERS`: server name -> how to reach it. */
export const McpServersSchema = z.record(McpServerNameSchema, McpServerConfigSchema);
export type McpServers = z.infer<typeof McpServersSchema>;

/**
 * Reads `DURA_MCP_SERVERS`: a JSON object, or the path of a file holding one. Unset: no servers. Throws a
 * config error naming each problem.
 */
export function parseMcpServers(value: string | undefined): McpServers {
  const text = value?.trim() ?? '';
  if (text === '') return {};
  const json = text.startsWith('{') ? text : readConfigFile(text);
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw configError(`is not valid JSON (${(err as Error).message}); give an object {"<server>": {...}}`);
  }
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    const badName = Object.keys(raw).find((name) => !McpServerNameSchema.safeParse(name).success);
    if (badName !== undefined)
      throw configError(
        `names a server "${badName}": a server name is a lower-case word (letters, digits, "_", "-"), e.g. "github"`,
      );
  }
  const parsed = McpServersSchema.safeParse(raw);
  if (!parsed.success) throw configError(`is invalid: ${formatIssues(parsed.error).join('; ')}`);
  return parsed.data;
}

/** The problem with a `DURA_MCP_SERVERS` value, for a config schema's refinement; undefined when it is valid. */
export function mcpServersProblem(value: string | undefined): string | undefined {
  try {
    parseMcpServers(value);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A header or environment value as the deployment holds it; a missing variable or file is a config error. */
export function resolveSecretValue(value: SecretValue, what: string): string {
  if (typeof value === 'string') return value;
  if ('env' in value) {
    const found = process.env[value.env];
    if (found === undefined)
      throw configError(`${what} reads the environment variable ${value.env}, which is not set; set it`);
    return found;
  }
  return readConfigFile(value.file, what).replace(/\r?\n$/, '');
}

function readConfigFile(path: string, what = 'DURA_MCP_SERVERS'): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw configError(
      `${what === 'DURA_MCP_SERVERS' ? '' : `${what}: `}cannot read ${path} (${(err as Error).message})`,
    );
  }
}

function configError(message: string): DuraError {
  return new DuraError(CONFIG_ERROR_CODE, `DURA_MCP_SERVERS ${message}`);
}

/** `DURA_MCP_SERVERS`, spread into the config schema of every service that runs or plans tools. */
export const mcpConfigShape = {
  DURA_MCP_SERVERS: z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      const problem = mcpServersProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .describe(
      'MCP servers whose tools join the registry as `mcp.<server>.<tool>` (see docs/mcp.md): a JSON object `{"<server>": {"transport": "stdio", "command", "args"} | {"transport": "http", "url", "headers"}}`, or the path of a file holding it. Same on planner and gateways.',
    ),
};
