import * as z from 'zod';
import { CATALOGUE_VERSION, catalogueToolKey, type ToolLimits } from '@dura/contracts';
import type { CatalogueEntry } from '@dura/event-store';
import type { ToolDefinition, ToolRegistry } from '@dura/tools';
import { DEFAULT_TIMEOUT_MS } from './run-tool';

/** What the gateway applies beyond a tool's own definition. */
export interface ToolLimitSettings {
  /** `GATEWAY_TOOL_CONCURRENCY`: overrides a tool's own concurrency. */
  toolConcurrency?: Record<string, number>;
  /** `GATEWAY_MAX_ATTEMPTS`: the attempts of a tool without its own retry policy. */
  maxAttempts: number;
}

/** The limits the gateway holds a tool's calls to. */
export function limitsOf(tool: ToolDefinition, settings: ToolLimitSettings): ToolLimits {
  const concurrency = settings.toolConcurrency?.[tool.name] ?? tool.concurrency;
  const approval = tool.requiresApproval;
  return {
    ...(concurrency === undefined ? {} : { concurrency }),
    timeoutMs: tool.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    attempts: tool.retry?.attempts ?? settings.maxAttempts,
    approval: {
      required: approval !== undefined && approval !== false,
      ...(typeof approval === 'object' && approval.timeoutSeconds !== undefined
        ? { timeoutSeconds: approval.timeoutSeconds }
        : {}),
      ...(typeof approval === 'object' && approval.onTimeout ? { onTimeout: approval.onTimeout } : {}),
    },
  };
}

function inputSchemaOf(tool: ToolDefinition): Record<string, unknown> | undefined {
  if (tool.inputJsonSchema) return tool.inputJsonSchema;
  try {
    return z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' });
  } catch {
    return undefined;
  }
}

/** The catalogue entries of every tool this gateway runs. */
export function toolCatalogue(tools: ToolRegistry, settings: ToolLimitSettings, now: Date): CatalogueEntry[] {
  const announcedAt = now.toISOString();
  return tools.names().flatMap((name) => {
    const tool = tools.get(name);
    if (!tool) return [];
    const inputSchema = inputSchemaOf(tool);
    return [
      {
        key: catalogueToolKey(name),
        value: {
          v: CATALOGUE_VERSION,
          name,
          description: tool.description.slice(0, 4000),
          safety: tool.safety,
          ...(inputSchema ? { inputSchema } : {}),
          limits: limitsOf(tool, settings),
          announcedAt,
        },
      },
    ];
  });
}
