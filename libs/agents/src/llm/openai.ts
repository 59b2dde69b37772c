import { AttemptFailure, type CallTarget } from './errors';
import { postOnce, readJson } from './http';
import { OpenAIStream, openAIRequestBody, parseOpenAICompletion } from './openai-wire';
import { resolveSettings, withRetries } from './retry';
import { readSse } from './sse';
import { ToolNames } from './tool-names';
import type { ChatProvider, ChatRequest, ChatResponse, ProviderSettings } from './types';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * A model behind the OpenAI Chat Completions API: OpenAI itself, or a compatible server (vLLM, Ollama,
 * LM Studio, gateways) at `baseUrl`. Streams when the request has `onDelta`.
 */
export function createOpenAIProvider(settings: ProviderSettings = {}): ChatProvider {
  const resolved = resolveSettings(settings);
  const baseUrl = (settings.baseUrl ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const maxTokensField =
    new URL(baseUrl).hostname === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens';
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(resolved.apiKey ? { authorization: `Bearer ${resolved.apiKey}` } : {}),
    ...resolved.headers,
  };

  async function chat(request: ChatRequest): Promise<ChatResponse> {
    const target: CallTarget = { provider: 'openai', baseUrl, model: request.model, apiKey: resolved.apiKey };
    const names = ToolNames.forCall(request.tools, request.messages);
    const onDelta = request.onDelta;
    const body = openAIRequestBody(request, names, { stream: onDelta !== undefined, maxTokensField });
    return withRetries(target, resolved, request.signal, () =>
      postOnce({
        target,
        settings: resolved,
        url: `${baseUrl}/chat/completions`,
        headers,
        body,
        signal: request.signal,
        read: async (response) =>
          onDelta
            ? readStream(response, new OpenAIStream(names, onDelta), request.model)
            : parseOpenAICompletion(await readJson(response), names, request.model),
      }),
    );
  }

  return { provider: 'openai', chat };
}

async function readStream(
  response: Response,
  stream: OpenAIStream,
  requestModel: string,
): Promise<ChatResponse> {
  if (!response.body) throw new AttemptFailure('malformed', 'the streamed response has no body');
  for await (const event of readSse(response.body)) {
    if (stream.push(event.data)) break;
  }
  return stream.finish(requestModel);
}
