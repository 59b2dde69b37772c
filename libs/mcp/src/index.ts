export {
  mcpConfigShape,
  type McpServerConfig,
  McpServerConfigSchema,
  McpServerNameSchema,
  type McpServers,
  mcpServersProblem,
  McpServersSchema,
  type McpToolOverride,
  McpToolOverrideSchema,
  parseMcpServers,
  resolveSecretValue,
  type SecretValue,
} from './config';
export { attachMcpServers, type McpToolSource } from './mcp-tool-source';
export { storeBinaryBlocks } from './binary-blocks';
export { prepareServiceTools, type ServiceToolsWithMcp } from './service-tools';
export { MCP_TOOL_ERROR, type McpCallResult, type McpContent, observationOf } from './results';
export { type McpToolHints, mcpToolSafety } from './safety';
export {
  IDEMPOTENCY_META_KEY,
  type McpCallOptions,
  McpConnectionLost,
  type McpLog,
  McpServerConnection,
} from './server-connection';
export { mcpToolDefinition } from './tool-definition';
export { MCP_TOOL_PREFIX, mcpToolGroup, mcpToolName } from './tool-names';
