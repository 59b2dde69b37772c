import { httpRequestTool } from './builtin/http-request';
import {
  buildImageTool,
  deployTool,
  echoTool,
  failTool,
  notifyTool,
  runTestsTool,
} from './builtin/demo-tools';
import { ToolRegistry } from './registry';
import type { ToolDefinition } from './tool';

/** Every tool that ships with Dura. Add yours by passing `[...BUILTIN_TOOLS, myTool]` to `ToolRegistry`. */
export const BUILTIN_TOOLS: readonly ToolDefinition[] = [
  httpRequestTool,
  buildImageTool,
  runTestsTool,
  deployTool,
  notifyTool,
  echoTool,
  failTool,
] as ToolDefinition[];

export function builtinRegistry(): ToolRegistry {
  return new ToolRegistry(BUILTIN_TOOLS);
}
