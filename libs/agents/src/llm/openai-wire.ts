import * as z from 'zod';
import type { ChatMessage, ChatToolCall } from '@dura/contracts';
import { AttemptFailure } from './errors';
import type { ToolNames } from './tool-names';
import type { ChatRequest, ChatResponse } from './types';
import { decodeWire, normalizeFinish, parseEventData, toolArguments } from './wire-decode';

const FINISH: Record<string, string> = {
  stop: 'stop',
  tool_calls: 'tool_calls',
  length: 'length',
  function_call: 'tool_calls',
};

export interface OpenAIBodyOptions {
  stream: boolean;
  /** OpenAI's own API wants `max_completion_tokens` (newer models refuse `max_tokens`); most compatible servers want `max_tokens`. */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
}

/** The Chat Completions request body for `request`. */
export function openAIRequestBody(
  request: ChatRequest,
  names: ToolNames,
  options: OpenAIBodyOptions,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    messages: request.messages.map((message) => openAIMessage(message, names)),
    [options.maxTokensField]: request.maxTokens,
  };
  if (request.tools.length > 0)
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: {
        name: names.toProvider(tool.name),
        description: tool.description,
        parameters: tool.parameters,
      },
    }));
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (options.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

function openAIMessage(message: ChatMessage, names: ToolNames): Record<string, unknown> {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      return {
        role: 'assistant',
        content: message.content ?? null,
        ...(calls.length > 0 && {
          tool_calls: calls.map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: names.toProvider(call.name), arguments: JSON.stringify(call.arguments) },
          })),
        }),
      };
    }
    case 'tool':
      // The API has no error flag for tool results; say it in the text so the model knows the call failed.
      return {
        role: 'tool',
        tool_call_id: message.toolCallId,
        content: message.isError ? `Error: ${message.content}` : message.content,
      };
  }
}

const UsageWire = z.object({ prompt_tokens: z.number(), completion_tokens: z.number() });

const CompletionWire = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().nullish(),
                function: z.object({ name: z.string().min(1), arguments: z.unknown().optional() }),
              }),
            )
            .nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: UsageWire.nullish(),
});

/** Reads a non-streamed Chat Completions answer. */
export function parseOpenAICompletion(json: unknown, names: ToolNames, requestModel: string): ChatResponse {
  const wire = decodeWire(CompletionWire, json, 'the chat completion');
  const choice = wire.choices[0]!;
  const toolCalls = (choice.message.tool_calls ?? []).map((call, index) =>
    toolCall(names, call.id, call.function.name, call.function.arguments ?? '', index),
  );
  return response(
    choice.message.content,
    toolCalls,
    wire.usage,
    choice.finish_reason,
    wire.model ?? requestModel,
  );
}

function toolCall(
  names: ToolNames,
  id: string | null | undefined,
  providerName: string,
  args: unknown,
  index: number,
): ChatToolCall {
  const name = names.toDura(providerName);
  // Some compatible servers send no ids; the planner needs one to pair results with calls.
  return { id: id || `call_${index}`, name, arguments: toolArguments(args, name) };
}

function response(
  content: string | null | undefined,
  toolCalls: ChatToolCall[],
  usage: z.infer<typeof UsageWire> | null | undefined,
  finish: string | null | undefined,
  modelId: string,
): ChatResponse {
  return {
    ...(content ? { content } : {}),
    toolCalls,
    // Usage is bookkeeping: a compatible server that leaves it out still gets its answer used, counted as 0.
    usage: { inputTokens: usage?.prompt_tokens ?? 0, outputTokens: usage?.completion_tokens ?? 0 },
    finishReason: normalizeFinish(finish, toolCalls.length > 0, FINISH),
    modelId,
  };
}

const ChunkWire = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        delta: z
          .object({
            content: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().int().nonnegative().optional(),
                  id: z.string().nullish(),
                  function: z
                    .object({ name: z.string().nullish(), arguments: z.string().nullish() })
                    .nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: UsageWire.nullish(),
  error: z.object({ message: z.string().optional() }).loose().nullish(),
});

/** Accumulates a streamed Chat Completions answer chunk by chunk; tool calls arrive in fragments by index. */
export class OpenAIStream {
  #text = '';
  #calls = new Map<number, { id?: string; name: string; args: string }>();
  #finish: string | undefined;
  #usage: z.infer<typeof UsageWire> | undefined;
  #model: string | undefined;
  #done = false;

  constructor(
    private readonly names: ToolNames,
    private readonly onDelta: (text: string) => void,
  ) {}

  /** Feeds one `data:` payload; returns true after `[DONE]`. */
  push(data: string): boolean {
    if (data.trim() === '[DONE]') return (this.#done = true);
    const chunk = decodeWire(ChunkWire, parseEventData(data), 'a stream chunk');
    if (chunk.error)
      throw new AttemptFailure(
        'transient',
        `the stream reported an error: ${chunk.error.message ?? 'no message'}`,
      );
    this.#model ??= chunk.model;
    if (chunk.usage) this.#usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      if (choice.finish_reason) this.#finish = choice.finish_reason;
      const delta = choice.delta;
      if (delta?.content) {
        this.#text += delta.content;
        this.onDelta(delta.content);
      }
      for (const [position, fragment] of (delta?.tool_calls ?? []).entries()) {
        const index = fragment.index ?? position;
        const call = this.#calls.get(index) ?? { name: '', args: '' };
        if (fragment.id) call.id = fragment.id;
        // The name comes whole with a call's first fragment; a server that repeats it must not double it.
        if (fragment.function?.name && call.name === '') call.name = fragment.function.name;
        if (fragment.function?.arguments) call.args += fragment.function.arguments;
        this.#calls.set(index, call);
      }
    }
    return false;
  }

  finish(requestModel: string): ChatResponse {
    if (!this.#done) throw new AttemptFailure('malformed', 'the stream ended before its [DONE] marker');
    const calls = [...this.#calls.entries()].sort(([a], [b]) => a - b);
    const toolCalls = calls.map(([index, call]) => {
      if (call.name === '')
        throw new AttemptFailure('malformed', `streamed tool call ${index} has no function name`);
      return toolCall(this.names, call.id, call.name, call.args, index);
    });
    return response(this.#text, toolCalls, this.#usage, this.#finish, this.#model ?? requestModel);
  }
}
