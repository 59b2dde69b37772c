import type { JsonObject, JsonValue } from '@dura/contracts';
import { ToolError } from '@dura/tools';

/** One content block of a tool result, as the MCP SDK returns it (only the fields Dura reads). */
export interface McpContent {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri: string; mimeType?: string; text?: string; blob?: string };
}

/** A `tools/call` result, as the MCP SDK returns it. */
export interface McpCallResult {
  content?: McpContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Code of the failure recorded for a result with `isError: true`: the model reads its text. */
export const MCP_TOOL_ERROR = 'mcp_tool_error';

/**
 * The observation a call's result becomes: `{ content, structuredContent? }` with every block kept (text,
 * images and audio as base64 with their MIME type, embedded resources, links). The gateway moves a large
 * observation to the object store as for any tool. A result with `isError` throws a terminal `ToolError`
 * whose message is the result's text, so the model sees what the server said went wrong.
 */
export function observationOf(tool: string, result: McpCallResult): JsonValue {
  const content = (result.content ?? []).map(blockOf);
  if (result.isError === true) {
    const text = content
      .map((block) => (typeof block.text === 'string' ? block.text : `[${JSON.stringify(block.type)}]`))
      .join('\n');
    throw new ToolError(MCP_TOOL_ERROR, `${tool} reported an error: ${text || '(no text)'}`, {
      retryable: false,
    });
  }
  const observation: JsonObject = { content };
  if (result.structuredContent !== undefined)
    observation.structuredContent = JSON.parse(JSON.stringify(result.structuredContent)) as JsonObject;
  return observation;
}

function blockOf(block: McpContent): JsonObject {
  const out: JsonObject = { type: block.type };
  for (const key of ['text', 'data', 'mimeType', 'uri', 'name'] as const) {
    const value = block[key];
    if (typeof value === 'string') out[key] = value;
  }
  if (block.resource) out.resource = JSON.parse(JSON.stringify(block.resource)) as JsonObject;
  return out;
}
