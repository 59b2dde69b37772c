import { Usage, type AgentOutputItem, type ModelResponse } from '@openai/agents';
import { jsonObject, toolArguments, type InPlaceAnswer, type ModelAnswer } from '@dura/code-agents';
import type { ChatToolCall, JsonObject } from '@dura/contracts';

const KIND = 'openai-agents.response';

/** A model response as the log records it: its output items and usage in their own shape, and its text. */
export function answerOfResponse(response: ModelResponse, model: string, kind = KIND): InPlaceAnswer {
  const calls = toolCallsOf(response.output);
  return {
    content: textOf(response.output),
    ...(calls.length > 0 ? { toolCalls: calls } : {}),
    usage: { inputTokens: response.usage.inputTokens, outputTokens: response.usage.outputTokens },
    modelId: model,
    finishReason: calls.length > 0 ? 'tool_calls' : 'stop',
    native: {
      kind,
      response: jsonObject({
        output: response.output,
        usage: response.usage,
        responseId: response.responseId,
        requestId: response.requestId,
        providerData: response.providerData,
      }),
    },
  };
}

/** A recorded answer as `getResponse` returns it: its recorded output and usage, or ones built from its text. */
export function responseOf(answer: ModelAnswer, kind = KIND): ModelResponse {
  const native = answer.native as { kind?: string; response?: JsonObject } | undefined;
  if (native?.kind !== kind || !native.response) return builtResponse(answer);
  const recorded = native.response as unknown as ModelResponse;
  return { ...recorded, usage: new Usage(recorded.usage) };
}

function textOf(output: readonly AgentOutputItem[]): string {
  return output
    .flatMap((item) => (item.type === 'message' && item.role === 'assistant' ? item.content : []))
    .flatMap((part) => (part.type === 'output_text' ? [part.text] : []))
    .join('');
}

function toolCallsOf(output: readonly AgentOutputItem[]): ChatToolCall[] {
  return output.flatMap((item) =>
    item.type === 'function_call'
      ? [{ id: item.callId, name: item.name, arguments: toolArguments(item.arguments) }]
      : [],
  );
}

/** The response of an answer recorded without the Agents SDK's shape (a stand-in's). */
function builtResponse(answer: ModelAnswer): ModelResponse {
  const output: AgentOutputItem[] = [];
  if (answer.content !== '')
    output.push({
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: answer.content }],
    });
  for (const call of answer.toolCalls ?? [])
    output.push({
      type: 'function_call',
      callId: call.id,
      name: call.name,
      arguments: JSON.stringify(call.arguments),
      status: 'completed',
    });
  const usage = new Usage({ ...answer.usage, requests: 1 });
  return { output, usage };
}
