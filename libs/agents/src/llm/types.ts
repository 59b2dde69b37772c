import type { ChatMessage, ChatToolCall } from '@dura/contracts';

/** A tool as a model sees it: a Dura tool name, what it does, and a JSON Schema object for its arguments. */
export interface ChatToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments; always `type: "object"`. */
  parameters: Record<string, unknown>;
}

/** One model call, provider-neutral. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools: ChatToolSpec[];
  maxTokens: number;
  temperature?: number;
  /** Aborting stops the call at once; nothing is retried after that. */
  signal?: AbortSignal;
  /**
   * Streamed text deltas; when given, the adapter streams. Deltas are for live display only: when an attempt
   * fails mid-stream and is retried, the deltas of the new attempt start again from the beginning of its text.
   */
  onDelta?: (text: string) => void;
  /** Called when an attempt after the first starts reading its answer: the text streamed before is void. */
  onRestart?: () => void;
}

/** What the model answered. Tool names are Dura names again, whatever the provider calls them. */
export interface ChatResponse {
  content?: string;
  toolCalls: ChatToolCall[];
  usage: { inputTokens: number; outputTokens: number };
  /** Normalized: `'stop' | 'tool_calls' | 'length'`, or the provider's own value for anything else. */
  finishReason: string;
  /** The model id as the provider reported it. */
  modelId: string;
}

/** A model provider behind one door: `chat` retries what is worth retrying and throws a `DuraError` otherwise. */
export interface ChatProvider {
  readonly provider: 'openai' | 'anthropic';
  chat(request: ChatRequest): Promise<ChatResponse>;
}

export interface ProviderSettings {
  baseUrl?: string;
  apiKey?: string;
  /** Extra headers sent with every request (organisation ids, gateways' own auth, ...). */
  headers?: Record<string, string>;
  /** Attempts per call, the first included. Default 5. */
  maxAttempts?: number;
  /** First retry delay before jitter. Default 500 ms. */
  initialBackoffMs?: number;
  /** Longest retry delay, and the longest `Retry-After` the adapter waits for. Default 60 s. */
  maxBackoffMs?: number;
  /** Limit for one attempt, streaming included. Default 10 minutes. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Told of every 429 (rate limited), with the `Retry-After` asked for: flow control lowers the model's rate. */
  onRateLimited?: (
    target: { provider: 'openai' | 'anthropic'; model: string },
    retryAfterMs?: number,
  ) => void;
}
