import * as z from 'zod';
import type { JsonValue } from '@dura/contracts';
import { ToolError, type ToolDefinition } from '@dura/tools';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './config';
import { storeBinaryBlocks } from './binary-blocks';
import { observationOf } from './results';
import { mcpToolSafety } from './safety';
import { IDEMPOTENCY_META_KEY, McpConnectionLost, type McpServerConnection } from './server-connection';
import { mcpToolName } from './tool-names';

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * The Dura tool for one tool of an MCP server. Its safety comes from the server's annotations unless the
 * config overrides it; every call carries the idempotency key in `_meta`. A call whose connection dropped
 * under it has an unknown outcome: an idempotent tool is retried, an unsafe one is recorded as
 * `outcome_unknown` and waits for an operator.
 */
export function mcpToolDefinition(
  connection: McpServerConnection,
  tool: Tool,
  config: McpServerConfig,
): ToolDefinition {
  const override = config.tools?.[tool.name] ?? {};
  const name = mcpToolName(connection.name, tool.name);
  const safety = mcpToolSafety(tool.annotations, override.safety);
  const timeoutMs = override.timeoutMs ?? config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const inputJsonSchema = tool.inputSchema as Record<string, unknown>;
  const definition: ToolDefinition = {
    name,
    description:
      tool.description ??
      tool.title ??
      tool.annotations?.title ??
      `${tool.name} (MCP server ${connection.name})`,
    input: validatorOf(inputJsonSchema),
    inputJsonSchema,
    safety,
    timeoutMs,
    // An unsafe call that timed out or failed in an unforeseen way may have acted: never repeat it blindly.
    ...(safety === 'unsafe'
      ? { retry: { retryOn: (error) => error.code !== 'timeout' && error.code !== 'tool_error' } }
      : {}),
    async execute(args, ctx): Promise<JsonValue> {
      try {
        const result = await connection.call(tool.name, args as Record<string, unknown>, {
          signal: ctx.signal,
          timeoutMs,
          meta: { [IDEMPOTENCY_META_KEY]: ctx.idempotencyKey },
        });
        const observation = observationOf(name, result);
        return ctx.storeBytes ? await storeBinaryBlocks(observation, ctx.storeBytes) : observation;
      } catch (err) {
        if (err instanceof McpConnectionLost)
          throw safety === 'idempotent'
            ? new ToolError('mcp_connection_lost', err.message, { retryable: true, cause: err })
            : new ToolError(
                'outcome_unknown',
                `${err.message}; ${name} is unsafe and may have acted, so it is not run again: an operator decides (confirm or skip)`,
                { retryable: false, cause: err },
              );
        if (err instanceof ToolError) throw err;
        // Cannot connect, or the server answered the request with a protocol error: it never ran.
        throw new ToolError('mcp_error', (err as Error).message, { retryable: true, cause: err });
      }
    },
  };
  if (override.requiresApproval !== undefined) definition.requiresApproval = override.requiresApproval;
  if (override.concurrency !== undefined) definition.concurrency = override.concurrency;
  if (override.secrets) definition.secrets = override.secrets;
  return definition;
}

/** Validates arguments against the server's schema where zod can read it; the server validates them again. */
function validatorOf(schema: Record<string, unknown>): z.ZodType {
  try {
    return z.fromJSONSchema(schema);
  } catch {
    return z.looseObject({});
  }
}
