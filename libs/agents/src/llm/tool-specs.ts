import * as z from 'zod';
import {
  AgentRefSchema,
  CONTROL_TOOL_DESCRIPTIONS,
  CONTROL_TOOLS,
  ControlToolSchemas,
  isControlTool,
  type ControlToolName,
} from '@dura/contracts';
import type { ToolRegistry } from '@dura/tools';
import type { ChatToolSpec } from './types';

/**
 * Arguments of the control tools as a model sees them: the planner handles these itself (they become waits
 * and child runs) and they never reach the tool gateway. A model names a child agent; a whole inline spec
 * is for scripted plans only.
 */
export const CONTROL_TOOL_SCHEMAS = {
  ...ControlToolSchemas,
  [CONTROL_TOOLS.runAgent]: ControlToolSchemas[CONTROL_TOOLS.runAgent].extend({
    agent: AgentRefSchema.shape.name.describe('The registered agent to run.'),
  }),
} as const;

export { isControlTool, type ControlToolName };

/** The control tools, described for a model. */
export function controlToolSpecs(): ChatToolSpec[] {
  return (Object.keys(CONTROL_TOOL_SCHEMAS) as ControlToolName[]).map((name) => ({
    name,
    description: CONTROL_TOOL_DESCRIPTIONS[name],
    parameters: argumentSchema(name, CONTROL_TOOL_SCHEMAS[name]),
  }));
}

/**
 * The registry's tools, described for a model: all of them, or those named in `allowed` (in that order).
 * Control tool names in `allowed` are skipped here (`controlToolSpecs` describes them); an unknown name throws.
 */
export function toolSpecsFor(registry: ToolRegistry, allowed?: readonly string[]): ChatToolSpec[] {
  const names = [...new Set(allowed ?? registry.names())].filter((name) => !isControlTool(name));
  return names.map((name) => {
    const tool = registry.get(name);
    if (!tool)
      throw new Error(
        `the agent allows tool "${name}", which this deployment does not offer; known tools: ${registry.names().join(', ')}`,
      );
    const parameters = tool.inputJsonSchema
      ? objectSchema(name, tool.inputJsonSchema)
      : argumentSchema(name, tool.input);
    return { name, description: tool.description, parameters };
  });
}

/** The JSON Schema of a tool's input, as providers want it: an object schema without `$schema`. */
function argumentSchema(toolName: string, schema: z.ZodType): Record<string, unknown> {
  const json: Record<string, unknown> = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    // A `format` says what the long generated regex says, in far fewer tokens on every model call.
    override: ({ jsonSchema }) => {
      if (typeof jsonSchema.format === 'string') delete jsonSchema.pattern;
    },
  });
  return objectSchema(toolName, json);
}

/** A tool's JSON Schema without `$schema`; arguments are always an object. */
function objectSchema(toolName: string, schema: Record<string, unknown>): Record<string, unknown> {
  const json = { ...schema };
  delete json.$schema;
  if (json.type !== 'object')
    throw new Error(
      `tool "${toolName}" has an input schema that is not an object (${JSON.stringify(json).slice(0, 200)}); ` +
        'tool arguments are always a JSON object: declare the input with z.object(...)',
    );
  return json;
}
