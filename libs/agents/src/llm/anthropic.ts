import type { MessageCreateParams } from '@anthropic-ai/sdk/resources/messages';
import { AnthropicStream, anthropicRequestBody, parseAnthropicMessage } from './anthropic-wire';
import { anthropicTransport } from './clients';
import { AttemptFailure, type CallTarget } from './errors';
import { attemptOnce, readJson } from './http';
import { resolveSettings, withRetries } from './retry';
import { readSse } from './sse';
import { ToolNames } from './tool-names';
import type { ChatProvider, ChatRequest, ChatResponse, ProviderSettings } from './types';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * A model behind the Anthropic Messages API at `baseUrl`. Streams when the request has `onDelta`.
 *
 * The request goes through the official `@anthropic-ai/sdk` client (URL, key, headers, abort, the status of
 * the answer). Dura reads the 2xx body itself, as for OpenAI: the client's stream iterator ends quietly when
 * the body is cut and drops events that carry no `event:` line, and one way of reading bodies serves both
 * providers. The SSE framing is `eventsource-parser`'s.
 */
export function createAnthropicProvider(settings: ProviderSettings = {}): ChatProvider {
  const resolved = resolveSettings(settings);
  const baseUrl = (settings.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const transport = anthropicTransport(resolved, baseUrl, ANTHROPIC_VERSION);

  async function chat(request: ChatRequest): Promise<ChatResponse> {
    const target: CallTarget = {
      provider: 'anthropic',
      baseUrl,
      model: request.model,
      apiKey: resolved.apiKey,
    };
    const names = ToolNames.forCall(request.tools, request.messages);
    const onDelta = request.onDelta;
    // The body is Dura's wire mapping (its exact shape is tested); the client sends it as it is.
    const body = anthropicRequestBody(
      request,
      names,
      onDelta !== undefined,
    ) as unknown as MessageCreateParams;
    const { client, problem } = await transport();
    let reads = 0;
    return withRetries(target, resolved, request.signal, () =>
      attemptOnce({
        target,
        settings: resolved,
        url: `${baseUrl}/v1/messages`,
        signal: request.signal,
        send: (signal) => client.messages.create(body, { signal }).asResponse(),
        problem,
        read: async (response) => {
          // A retried attempt streams its answer from the start: what the previous one streamed is void.
          if (onDelta && (reads += 1) > 1) request.onRestart?.();
          return onDelta
            ? readStream(response, new AnthropicStream(names, onDelta))
            : parseAnthropicMessage(await readJson(response), names);
        },
      }),
    );
  }

  return { provider: 'anthropic', chat };
}

async function readStream(response: Response, stream: AnthropicStream): Promise<ChatResponse> {
  if (!response.body) throw new AttemptFailure('malformed', 'the streamed response has no body');
  for await (const event of readSse(response.body)) {
    if (stream.push(event)) break;
  }
  return stream.finish();
}
