export {
  McpServersSchema,
  McpServerConfigSchema,
  McpServerNameSchema,
  McpToolOverrideSchema,
  mcpConfigShape,
  mcpServersProblem,
  parseMcpServers,
  resolveSecretValue,
} from './config';
export type { McpServers, McpServerConfig, McpToolOverride, SecretValue } from './config';
export { attachMcpServers } from './mcp-tool-source';
export { storeBinaryBlocks } from './binary-blocks';
export type { McpToolSource } from './mcp-tool-source';
export { MCP_TOOL_ERROR, observationOf } from './results';
export type { McpCallResult, McpContent } from './results';
export { mcpToolSafety } from './safety';
export type { McpToolHints } from './safety';
export { IDEMPOTENCY_META_KEY, McpConnectionLost, McpServerConnection } from './server-connection';
export type { McpCallOptions, McpLog } from './server-connection';
export { mcpToolDefinition } from './tool-definition';
export { MCP_TOOL_PREFIX, mcpToolGroup, mcpToolName } from './tool-names';
