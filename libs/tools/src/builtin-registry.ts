import * as demo from './builtin/demo-tools';
import { ToolRegistry } from './registry';
import type { ToolDefinition } from './tool';

/**
 * The tools that ship with Dura and reach nothing outside the process. Add yours by passing
 * `[...BUILTIN_TOOLS, myTool]` to `ToolRegistry`. `http.request` is not among them: a deployment opts in
 * (`DURA_HTTP_REQUEST_ENABLED`, see service-tools.ts), under its egress policy.
 */
export const BUILTIN_TOOLS: readonly ToolDefinition[] = [
  demo.buildImageTool,
  demo.runTestsTool,
  demo.deployTool,
  demo.notifyTool,
  demo.echoTool,
  demo.failTool,
] as ToolDefinition[];

export function builtinRegistry(): ToolRegistry {
  return new ToolRegistry(BUILTIN_TOOLS);
}
