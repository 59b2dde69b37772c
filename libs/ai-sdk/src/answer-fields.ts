import type {
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4ToolCall,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import type { ChatToolCall, Usage } from '@dura/contracts';
import { toolArguments, type ModelAnswer } from '@dura/code-agents';

/** The answer's usage as budgets count it: what the provider reported, 0 where it reported nothing. */
export function usageOf(usage: LanguageModelV4Usage): Usage {
  return { inputTokens: usage.inputTokens.total ?? 0, outputTokens: usage.outputTokens.total ?? 0 };
}

/** The calls the model asked for, as the console shows a `ctx.model` answer's (the AI SDK's tool names). */
export function toolCallsOf(calls: readonly LanguageModelV4ToolCall[]): ChatToolCall[] {
  return calls.map((call) => ({
    id: call.toolCallId,
    name: call.toolName,
    arguments: toolArguments(call.input),
  }));
}

const UNIFIED = new Set<string>([
  'stop',
  'length',
  'content-filter',
  'tool-calls',
  'error',
  'interrupted',
  'other',
]);

/** An answer recorded without the AI SDK's own shape (a stand-in's): its content, calls and usage. */
export function contentOf(answer: ModelAnswer): LanguageModelV4Content[] {
  return [
    ...(answer.content === '' ? [] : [{ type: 'text' as const, text: answer.content }]),
    ...(answer.toolCalls ?? []).map((call) => ({
      type: 'tool-call' as const,
      toolCallId: call.id,
      toolName: call.name,
      input: JSON.stringify(call.arguments),
    })),
  ];
}

export function finishReasonOf(answer: ModelAnswer): LanguageModelV4FinishReason {
  const unified = UNIFIED.has(answer.finishReason) ? answer.finishReason : 'other';
  return { unified: unified as LanguageModelV4FinishReason['unified'], raw: answer.finishReason };
}

export function usageOfAnswer(answer: ModelAnswer): LanguageModelV4Usage {
  return {
    inputTokens: {
      total: answer.usage.inputTokens,
      noCache: undefined,
      cacheRead: undefined,
      cacheWrite: undefined,
    },
    outputTokens: { total: answer.usage.outputTokens, text: undefined, reasoning: undefined },
  };
}

/** A recorded part or content item made live again: URLs and dates the JSON form turned into strings. */
export function revived<T>(item: T): T {
  const value = item as Record<string, unknown>;
  const data = value['data'] as Record<string, unknown> | undefined;
  if (data?.['type'] === 'url' && typeof data['url'] === 'string')
    return { ...value, data: { ...data, url: new URL(data['url']) } } as T;
  if (typeof value['timestamp'] === 'string')
    return { ...value, timestamp: new Date(value['timestamp']) } as T;
  return item;
}
