export { defineTool, ToolError } from './tool';
export type { ToolDefinition, ToolContext, ToolSafety, ToolStatus } from './tool';
export { ToolRegistry } from './registry';
export { BUILTIN_TOOLS, builtinRegistry } from './builtin-registry';
export { httpRequestTool } from './builtin/http-request';
export {
  buildImageTool,
  runTestsTool,
  deployTool,
  notifyTool,
  echoTool,
  failTool,
} from './builtin/demo-tools';
export { loadToolRegistry, toolModulesFrom } from './load-registry';
export { retryDelayMs } from './retry-policy';
export type { RetryPolicy } from './retry-policy';
