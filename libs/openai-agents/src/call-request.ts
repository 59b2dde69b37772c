import type { ModelRequest } from '@openai/agents';
import { jsonObject } from '@dura/code-agents';
import type { JsonObject } from '@dura/contracts';

/** Whether the Runner asked for the whole response (`getResponse`) or a stream of events. */
export type CallMode = 'response' | 'stream';

/**
 * What identifies an Agents SDK model call in the log: the model, the mode and everything the Runner sends
 * that shapes the answer. The abort signal, the tracing flag and the retry policy (a function) do not.
 */
export function callRequest(mode: CallMode, model: string, request: ModelRequest): JsonObject {
  const { signal: _signal, tracing: _tracing, modelSettings, ...shaping } = request;
  const { retry: _retry, ...settings } = modelSettings;
  return jsonObject({ framework: 'openai-agents', mode, model, ...shaping, modelSettings: settings });
}

/** The size of what is sent, in characters: the estimate a call's budget is reserved on. */
export function inputChars(request: JsonObject): number {
  return JSON.stringify([
    request['systemInstructions'] ?? null,
    request['input'],
    request['tools'] ?? null,
    request['handoffs'] ?? null,
  ]).length;
}
