import * as z from 'zod';
import type { ChatMessage, ChatToolCall } from '@dura/contracts';
import { AttemptFailure } from './errors';
import type { SseEvent } from './sse';
import type { ToolNames } from './tool-names';
import type { ChatRequest, ChatResponse } from './types';
import { decodeWire, normalizeFinish, parseEventData, toolArguments } from './wire-decode';

const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
};

type Block = Record<string, unknown> & { type: string };
interface WireMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

/** The Messages API request body for `request`. */
export function anthropicRequestBody(
  request: ChatRequest,
  names: ToolNames,
  stream: boolean,
): Record<string, unknown> {
  const system = request.messages.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n\n');
  const body: Record<string, unknown> = {
    model: request.model,
    max_tokens: request.maxTokens,
    ...(system !== '' && { system }),
    messages: anthropicMessages(request.messages, names),
  };
  if (request.tools.length > 0)
    body.tools = request.tools.map((tool) => ({
      name: names.toProvider(tool.name),
      description: tool.description,
      input_schema: tool.parameters,
    }));
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (stream) body.stream = true;
  return body;
}

/**
 * Conversation turns as content blocks. Consecutive messages of one role become one turn, so the results of
 * parallel tool calls travel together in one user message, with `tool_result` blocks first as the API asks.
 */
function anthropicMessages(messages: readonly ChatMessage[], names: ToolNames): WireMessage[] {
  const turns: WireMessage[] = [];
  const append = (role: WireMessage['role'], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        append('user', textBlocks(message.content));
        break;
      case 'assistant':
        append('assistant', [
          ...textBlocks(message.content),
          ...(message.toolCalls ?? []).map((call) => ({
            type: 'tool_use',
            id: call.id,
            name: names.toProvider(call.name),
            input: call.arguments,
          })),
        ]);
        break;
      case 'tool':
        append('user', [
          {
            type: 'tool_result',
            tool_use_id: message.toolCallId,
            content: message.content,
            ...(message.isError && { is_error: true }),
          },
        ]);
        break;
    }
  }
  for (const turn of turns) if (turn.role === 'user') turn.content.sort((a, b) => rank(a) - rank(b));
  return turns;
}

// The API refuses empty text blocks.
const textBlocks = (text: string | undefined): Block[] => (text ? [{ type: 'text', text }] : []);
const rank = (block: Block) => (block.type === 'tool_result' ? 0 : 1);

const UsageWire = z.object({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});
type WireUsage = z.infer<typeof UsageWire>;

const BlockWire = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
});

const MessageWire = z.object({
  model: z.string(),
  content: z.array(BlockWire),
  stop_reason: z.string().nullish(),
  usage: UsageWire,
});

/** Reads a non-streamed Messages API answer. */
export function parseAnthropicMessage(json: unknown, names: ToolNames): ChatResponse {
  const wire = decodeWire(MessageWire, json, 'the message');
  let text = '';
  const toolCalls: ChatToolCall[] = [];
  for (const block of wire.content) {
    if (block.type === 'text') text += block.text ?? '';
    if (block.type === 'tool_use') toolCalls.push(toolUse(names, block.id, block.name, block.input));
  }
  return response(text, toolCalls, wire.usage, wire.stop_reason, wire.model);
}

function toolUse(
  names: ToolNames,
  id: string | undefined,
  providerName: string | undefined,
  input: unknown,
): ChatToolCall {
  if (!id || !providerName) throw new AttemptFailure('malformed', 'a tool_use block has no id or no name');
  const name = names.toDura(providerName);
  return { id, name, arguments: toolArguments(input ?? {}, name) };
}

function response(
  text: string,
  toolCalls: ChatToolCall[],
  usage: WireUsage,
  stop: string | null | undefined,
  modelId: string,
): ChatResponse {
  return {
    ...(text !== '' && { content: text }),
    toolCalls,
    // Cached prompt tokens are reported apart from `input_tokens`; the run's budget counts them all.
    usage: {
      inputTokens:
        (usage.input_tokens ?? 0) +
        (usage.cache_creation_input_tokens ?? 0) +
        (usage.cache_read_input_tokens ?? 0),
      outputTokens: usage.output_tokens ?? 0,
    },
    finishReason: normalizeFinish(stop, toolCalls.length > 0, FINISH),
    modelId,
  };
}

/** Error types a streamed `error` event can carry that another attempt would not fix. */
const FINAL_ERROR_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
]);

const EventWire = z.looseObject({
  type: z.string(),
  index: z.number().int().nonnegative().optional(),
  message: z.object({ model: z.string(), usage: UsageWire.nullish() }).optional(),
  content_block: BlockWire.optional(),
  delta: z
    .looseObject({
      type: z.string().optional(),
      text: z.string().optional(),
      partial_json: z.string().optional(),
      stop_reason: z.string().nullish(),
    })
    .optional(),
  usage: UsageWire.nullish(),
  error: z.looseObject({ type: z.string().optional(), message: z.string().optional() }).optional(),
});

type StreamBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id?: string; name?: string; json: string; input: unknown }
  | { type: 'other' };

/** Accumulates a streamed Messages API answer event by event. */
export class AnthropicStream {
  #blocks = new Map<number, StreamBlock>();
  #model: string | undefined;
  #usage: WireUsage = {};
  #stop: string | null | undefined;
  #stopped = false;

  constructor(
    private readonly names: ToolNames,
    private readonly onDelta: (text: string) => void,
  ) {}

  /** Feeds one event; returns true after `message_stop`. */
  push(sse: SseEvent): boolean {
    const event = decodeWire(EventWire, parseEventData(sse.data), `a "${sse.event}" stream event`);
    switch (event.type) {
      case 'message_start':
        this.#model = event.message?.model;
        this.#addUsage(event.message?.usage);
        break;
      case 'content_block_start': {
        const block = startBlock(event.content_block);
        this.#blocks.set(this.#index(event.index), block);
        if (block.type === 'text' && block.text !== '') this.onDelta(block.text);
        break;
      }
      case 'content_block_delta':
        this.#delta(this.#index(event.index), event.delta);
        break;
      case 'message_delta':
        if (event.delta?.stop_reason !== undefined) this.#stop = event.delta.stop_reason;
        this.#addUsage(event.usage);
        break;
      case 'message_stop':
        return (this.#stopped = true);
      case 'error': {
        const type = event.error?.type ?? 'error';
        const message = `the stream reported ${type}: ${event.error?.message ?? 'no message'}`;
        throw new AttemptFailure(FINAL_ERROR_TYPES.has(type) ? 'rejected' : 'transient', message);
      }
    }
    return false;
  }

  finish(): ChatResponse {
    if (!this.#stopped)
      throw new AttemptFailure('malformed', 'the stream ended before its message_stop event');
    if (this.#model === undefined)
      throw new AttemptFailure('malformed', 'the stream had no message_start event');
    let text = '';
    const toolCalls: ChatToolCall[] = [];
    for (const [, block] of [...this.#blocks.entries()].sort(([a], [b]) => a - b)) {
      if (block.type === 'text') text += block.text;
      if (block.type === 'tool_use')
        toolCalls.push(
          toolUse(this.names, block.id, block.name, block.json === '' ? block.input : block.json),
        );
    }
    return response(text, toolCalls, this.#usage, this.#stop, this.#model);
  }

  #index(index: number | undefined): number {
    if (index === undefined) throw new AttemptFailure('malformed', 'a content block event has no index');
    return index;
  }

  #delta(index: number, delta: z.infer<typeof EventWire>['delta']): void {
    const block = this.#blocks.get(index);
    if (!block)
      throw new AttemptFailure(
        'malformed',
        `a delta arrived for content block ${index}, which never started`,
      );
    if (block.type === 'text' && delta?.type === 'text_delta' && delta.text) {
      block.text += delta.text;
      this.onDelta(delta.text);
    }
    if (block.type === 'tool_use' && delta?.type === 'input_json_delta')
      block.json += delta.partial_json ?? '';
  }

  #addUsage(usage: WireUsage | null | undefined): void {
    for (const [key, value] of Object.entries(usage ?? {}))
      if (typeof value === 'number') this.#usage[key as keyof WireUsage] = value;
  }
}

function startBlock(block: z.infer<typeof BlockWire> | undefined): StreamBlock {
  if (block?.type === 'text') return { type: 'text', text: block.text ?? '' };
  if (block?.type === 'tool_use')
    return { type: 'tool_use', id: block.id, name: block.name, json: '', input: block.input };
  // Thinking and other block kinds carry nothing the planner records.
  return { type: 'other' };
}
