import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DuraError } from '@dura/contracts';
import { BUILTIN_TOOLS } from './builtin-registry';
import { ToolRegistry } from './registry';
import type { ToolDefinition } from './tool';

function isTool(value: unknown): value is ToolDefinition {
  const v = value as Partial<ToolDefinition> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.name === 'string' &&
    typeof v.execute === 'function' &&
    v.input !== undefined
  );
}

/**
 * The built-in tools plus every tool exported (singly or in an array) by the given modules — how a deployment
 * adds its own tools without changing the service entry points (`DURA_TOOLS_MODULES=./tools/payments.ts`).
 */
export async function loadToolRegistry(
  modules: readonly string[],
  builtins: readonly ToolDefinition[] = BUILTIN_TOOLS,
): Promise<ToolRegistry> {
  const tools: ToolDefinition[] = [...builtins];
  for (const path of modules) {
    let exported: Record<string, unknown>;
    try {
      exported = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
    } catch (err) {
      throw new DuraError(
        'tool_module_unloadable',
        `cannot load tool module ${path}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    const found = Object.values(exported)
      .flatMap((value): unknown[] => (Array.isArray(value) ? (value as unknown[]) : [value]))
      .filter(isTool);
    if (found.length === 0)
      throw new DuraError('tool_module_empty', `tool module ${path} exports no tool (defineTool(...))`);
    tools.push(...new Set(found));
  }
  return new ToolRegistry(tools);
}

/** Splits a comma-separated DURA_TOOLS_MODULES value. */
export function toolModulesFrom(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}
