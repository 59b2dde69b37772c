import { AnthropicStream, anthropicRequestBody, parseAnthropicMessage } from './anthropic-wire';
import { AttemptFailure, type CallTarget } from './errors';
import { postOnce, readJson } from './http';
import { resolveSettings, withRetries } from './retry';
import { readSse } from './sse';
import { ToolNames } from './tool-names';
import type { ChatProvider, ChatRequest, ChatResponse, ProviderSettings } from './types';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';

/** A model behind the Anthropic Messages API at `baseUrl`. Streams when the request has `onDelta`. */
export function createAnthropicProvider(settings: ProviderSettings = {}): ChatProvider {
  const resolved = resolveSettings(settings);
  const baseUrl = (settings.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
    ...(resolved.apiKey ? { 'x-api-key': resolved.apiKey } : {}),
    ...resolved.headers,
  };

  async function chat(request: ChatRequest): Promise<ChatResponse> {
    const target: CallTarget = {
      provider: 'anthropic',
      baseUrl,
      model: request.model,
      apiKey: resolved.apiKey,
    };
    const names = ToolNames.forCall(request.tools, request.messages);
    const onDelta = request.onDelta;
    const body = anthropicRequestBody(request, names, onDelta !== undefined);
    return withRetries(target, resolved, request.signal, () =>
      postOnce({
        target,
        settings: resolved,
        url: `${baseUrl}/v1/messages`,
        headers,
        body,
        signal: request.signal,
        read: async (response) =>
          onDelta
            ? readStream(response, new AnthropicStream(names, onDelta))
            : parseAnthropicMessage(await readJson(response), names),
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
