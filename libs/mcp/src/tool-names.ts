/** Prefix of every tool an MCP server brings: `mcp.<server>.<tool>`. */
export const MCP_TOOL_PREFIX = 'mcp';

/** The prefix of server `server`'s tools, with its trailing dot. */
export function mcpToolGroup(server: string): string {
  return `${MCP_TOOL_PREFIX}.${server}.`;
}

/**
 * The Dura name of an MCP tool: `mcp.<server>.<tool>` in Dura's alphabet (dotted lower-case words). camelCase
 * becomes snake_case and any other character `_`: `getForecast` -> `mcp.weather.get_forecast`. Two server
 * tools that meet on one name are reported by `McpToolSource`, never merged.
 */
export function mcpToolName(server: string, tool: string): string {
  let word = tool
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '_');
  if (!/^[a-z]/.test(word)) word = `t_${word}`;
  return `${mcpToolGroup(server)}${word}`.slice(0, 100);
}
