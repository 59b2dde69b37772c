import type { ToolSafety } from '@dura/tools';

/** The behaviour hints of an MCP tool (all optional; the MCP spec's defaults apply when absent). */
export interface McpToolHints {
  readOnlyHint?: boolean | undefined;
  idempotentHint?: boolean | undefined;
  destructiveHint?: boolean | undefined;
}

/**
 * The safety class an MCP tool's annotations imply. `readOnlyHint` (no effect at all) and `idempotentHint`
 * (a repeat with the same arguments adds nothing) may run again after a crash, with the same idempotency key;
 * anything else, `destructiveHint` or no hint, is `unsafe`: an interrupted call goes to an operator. A
 * configured `override` wins.
 */
export function mcpToolSafety(hints: McpToolHints | undefined, override?: ToolSafety): ToolSafety {
  if (override) return override;
  if (hints?.readOnlyHint === true) return 'idempotent';
  if (hints?.idempotentHint === true) return 'idempotent';
  return 'unsafe';
}
