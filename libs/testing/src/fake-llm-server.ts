import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeLlmProvider = 'openai' | 'anthropic';

/** A tool call the fake model makes. `name` is the provider-side name (`pay__charge`), as a real provider sends it. */
export interface FakeToolCall {
  id?: string;
  name: string;
  /** An object is sent as JSON; a string is sent verbatim, so a test can send arguments that are not JSON. */
  arguments: unknown;
}

/**
 * What the fake model answers one request with:
 * - `message`: a real answer in the provider's wire format, streamed as SSE when the request asked to stream;
 *   `stop` is the provider's own finish value (`tool_calls` / `tool_use`, ...), derived when left out;
 * - `status`: an HTTP error, with a provider-shaped error body unless `body` is given;
 * - `raw`: these exact bytes, for malformed answers.
 * `delayMs` holds the answer back, e.g. to kill a caller mid-call; `pieceDelayMs` paces a streamed answer's
 * pieces, so a watcher sees tokens arrive while the model answers.
 */
export type FakeLlmReply = (
  | {
      kind: 'message';
      content?: string;
      toolCalls?: FakeToolCall[];
      usage?: { inputTokens: number; outputTokens: number };
      stop?: string;
      /** The model id to report; the request's `model` when left out. */
      model?: string;
    }
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'raw'; status?: number; body: string; contentType?: string }
) & {
  delayMs?: number;
  pieceDelayMs?: number;
  /** Characters per streamed text piece (default: the text in three pieces). */
  pieceChars?: number;
};

export interface FakeLlmRequest {
  // Request bodies are whatever the adapter under test sent; tests assert on them field by field.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** When it arrived (Date.now of the test process). */
  receivedAt: number;
  /** When the first piece of a streamed answer's text was written (ms since the epoch, sub-ms precision). */
  firstPieceAt?: number;
}

export interface FakeLlmServer extends AsyncDisposable {
  /** The base URL to give the adapter: `<origin>/v1` for openai, the origin for anthropic. */
  readonly url: string;
  /** Every model call received, in order. */
  readonly requests: FakeLlmRequest[];
  close(): Promise<void>;
}

export interface StartFakeLlmServerOptions {
  provider: FakeLlmProvider;
  /**
   * Decides each answer; `index` counts model calls from 0, and `gone` aborts when the caller closed the
   * connection before the answer was complete (it gave up on the call). A throw becomes an HTTP 500.
   */
  respond: (
    request: FakeLlmRequest & { index: number; gone: AbortSignal },
  ) => FakeLlmReply | Promise<FakeLlmReply>;
}

const DEFAULT_USAGE = { inputTokens: 12, outputTokens: 7 };
const PATHS: Record<FakeLlmProvider, string> = { openai: '/v1/chat/completions', anthropic: '/v1/messages' };

/**
 * A model provider on a free port of 127.0.0.1 that speaks the OpenAI Chat Completions or the Anthropic
 * Messages wire format and answers whatever `respond` says: real adapters, real HTTP, scripted model.
 */
export async function startFakeLlmServer(options: StartFakeLlmServerOptions): Promise<FakeLlmServer> {
  const { provider } = options;
  const requests: FakeLlmRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    if (req.method !== 'POST' || path !== PATHS[provider])
      return sendJson(
        res,
        404,
        errorBody(provider, `the fake ${provider} server has no route ${req.method} ${path}`),
      );
    const text = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return sendJson(res, 400, errorBody(provider, 'the request body is not JSON'));
    }
    const request: FakeLlmRequest = { body, headers: flatHeaders(req), receivedAt: Date.now() };
    const index = requests.push(request) - 1;
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    if (res.destroyed) gone.abort();
    const reply = await options.respond({ ...request, index, gone: gone.signal });
    if (reply.delayMs) await sleep(reply.delayMs, timers);
    await send(res, provider, reply, request, index, timers);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody(provider, `the fake server failed: ${String(err)}`));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closed;
  };
  return {
    url: provider === 'openai' ? `${origin}/v1` : origin,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}

async function send(
  res: ServerResponse,
  provider: FakeLlmProvider,
  reply: FakeLlmReply,
  request: FakeLlmRequest,
  index: number,
  timers: Set<NodeJS.Timeout>,
): Promise<void> {
  if (res.destroyed) return;
  const body = request.body as RequestBody;
  switch (reply.kind) {
    case 'status':
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.body ?? errorBody(provider, `fake failure with HTTP ${reply.status}`)));
      return;
    case 'raw':
      res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' });
      res.end(reply.body);
      return;
    case 'message': {
      const message = {
        ...reply,
        model: reply.model ?? (typeof body.model === 'string' ? body.model : 'fake-model'),
      };
      if (body.stream !== true) return sendJson(res, 200, renderMessage(provider, message, index));
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      // One write per event, each after a turn of the event loop, so the client really reads them piecemeal.
      const first = pieces(message.content ?? '', reply.pieceChars)[0];
      for (const event of streamEvents(provider, message, index, body)) {
        if (res.destroyed) return;
        res.write(event);
        if (
          first !== undefined &&
          request.firstPieceAt === undefined &&
          event.includes(JSON.stringify(first))
        )
          request.firstPieceAt = performance.timeOrigin + performance.now();
        if (reply.pieceDelayMs) await sleep(reply.pieceDelayMs, timers);
        else await new Promise((resolve) => setImmediate(resolve));
      }
      res.end();
    }
  }
}

/** The fields of a request body the fake's answer depends on. */
interface RequestBody {
  model?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown };
}

type Message = Extract<FakeLlmReply, { kind: 'message' }> & { model: string };

function renderMessage(provider: FakeLlmProvider, message: Message, index: number): unknown {
  const usage = message.usage ?? DEFAULT_USAGE;
  const calls = message.toolCalls ?? [];
  if (provider === 'openai')
    return {
      id: `chatcmpl-fake-${index}`,
      object: 'chat.completion',
      created: 1_700_000_000 + index,
      model: message.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: message.content ?? null,
            ...(calls.length > 0 && {
              tool_calls: calls.map((call, i) => ({
                id: call.id ?? openAICallId(index, i),
                type: 'function',
                function: { name: call.name, arguments: argumentsText(call.arguments) },
              })),
            }),
          },
          finish_reason: message.stop ?? (calls.length > 0 ? 'tool_calls' : 'stop'),
        },
      ],
      usage: openAIUsage(usage),
    };
  return {
    id: `msg_fake_${index}`,
    type: 'message',
    role: 'assistant',
    model: message.model,
    content: [
      ...(message.content ? [{ type: 'text', text: message.content }] : []),
      ...calls.map((call, i) => ({
        type: 'tool_use',
        id: call.id ?? anthropicCallId(index, i),
        name: call.name,
        input: typeof call.arguments === 'string' ? parseOr(call.arguments) : call.arguments,
      })),
    ],
    stop_reason: message.stop ?? (calls.length > 0 ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
  };
}

function* streamEvents(
  provider: FakeLlmProvider,
  message: Message,
  index: number,
  body: RequestBody,
): Generator<string> {
  if (provider === 'openai') yield* openAIStream(message, index, body.stream_options?.include_usage === true);
  else yield* anthropicStream(message, index);
}

function* openAIStream(message: Message, index: number, includeUsage: boolean): Generator<string> {
  const base = {
    id: `chatcmpl-fake-${index}`,
    object: 'chat.completion.chunk',
    created: 1_700_000_000 + index,
    model: message.model,
  };
  const chunk = (delta: unknown, finish: string | null = null) =>
    sse(undefined, { ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const calls = message.toolCalls ?? [];
  yield chunk({ role: 'assistant', content: '' });
  for (const piece of pieces(message.content ?? '', message.pieceChars)) yield chunk({ content: piece });
  for (const [i, call] of calls.entries()) {
    const id = call.id ?? openAICallId(index, i);
    yield chunk({
      tool_calls: [{ index: i, id, type: 'function', function: { name: call.name, arguments: '' } }],
    });
    for (const piece of pieces(argumentsText(call.arguments)))
      yield chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] });
  }
  yield chunk({}, message.stop ?? (calls.length > 0 ? 'tool_calls' : 'stop'));
  if (includeUsage)
    yield sse(undefined, { ...base, choices: [], usage: openAIUsage(message.usage ?? DEFAULT_USAGE) });
  yield 'data: [DONE]\n\n';
}

function* anthropicStream(message: Message, index: number): Generator<string> {
  const usage = message.usage ?? DEFAULT_USAGE;
  const calls = message.toolCalls ?? [];
  yield sse('message_start', {
    type: 'message_start',
    message: {
      id: `msg_fake_${index}`,
      type: 'message',
      role: 'assistant',
      content: [],
      model: message.model,
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.inputTokens, output_tokens: 1 },
    },
  });
  yield sse('ping', { type: 'ping' });
  let block = 0;
  if (message.content) {
    yield sse('content_block_start', {
      type: 'content_block_start',
      index: block,
      content_block: { type: 'text', text: '' },
    });
    for (const text of pieces(message.content, message.pieceChars))
      yield sse('content_block_delta', {
        type: 'content_block_delta',
        index: block,
        delta: { type: 'text_delta', text },
      });
    yield sse('content_block_stop', { type: 'content_block_stop', index: block });
    block += 1;
  }
  for (const [i, call] of calls.entries()) {
    const id = call.id ?? anthropicCallId(index, i);
    yield sse('content_block_start', {
      type: 'content_block_start',
      index: block,
      content_block: { type: 'tool_use', id, name: call.name, input: {} },
    });
    for (const partial_json of pieces(argumentsText(call.arguments)))
      yield sse('content_block_delta', {
        type: 'content_block_delta',
        index: block,
        delta: { type: 'input_json_delta', partial_json },
      });
    yield sse('content_block_stop', { type: 'content_block_stop', index: block });
    block += 1;
  }
  yield sse('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: message.stop ?? (calls.length > 0 ? 'tool_use' : 'end_turn'), stop_sequence: null },
    usage: { output_tokens: usage.outputTokens },
  });
  yield sse('message_stop', { type: 'message_stop' });
}

function sse(event: string | undefined, data: unknown): string {
  return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}

/** Splits text into up to three pieces, as providers split their output into deltas. */
function pieces(text: string, chars?: number): string[] {
  if (text.length <= 1) return text === '' ? [] : [text];
  const size = chars ?? Math.ceil(text.length / 3);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function errorBody(provider: FakeLlmProvider, message: string): unknown {
  return provider === 'openai'
    ? { error: { message, type: 'server_error', param: null, code: null } }
    : { type: 'error', error: { type: 'api_error', message } };
}

const openAIUsage = (usage: { inputTokens: number; outputTokens: number }) => ({
  prompt_tokens: usage.inputTokens,
  completion_tokens: usage.outputTokens,
  total_tokens: usage.inputTokens + usage.outputTokens,
});
const openAICallId = (request: number, call: number) => `call_fake_${request}_${call}`;
const anthropicCallId = (request: number, call: number) => `toolu_fake_${request}_${call}`;
const argumentsText = (args: unknown) => (typeof args === 'string' ? args : JSON.stringify(args ?? {}));

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}

function sleep(ms: number, timers: Set<NodeJS.Timeout>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resolve();
    }, ms);
    timers.add(timer);
  });
}
