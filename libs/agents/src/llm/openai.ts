import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { callWithRetries } from './chat-call';
import { openAITransport } from './clients';
import type { CallTarget } from './errors';
import { OpenAIStream, openAIRequestBody, parseOpenAICompletion } from './openai-wire';
import { resolveSettings } from './retry';
import { readSseAnswer } from './sse';
import { ToolNames } from './tool-names';
import type { ChatProvider, ChatRequest, ChatResponse, ProviderSettings } from './types';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * A model behind the OpenAI Chat Completions API: OpenAI itself, or a compatible server (vLLM, Ollama,
 * LM Studio, gateways) at `baseUrl`. Streams when the request has `onDelta`.
 *
 * The request goes through the official `openai` client (URL, key, headers, abort, the status of the
 * answer). Dura reads the 2xx body itself: the client's stream iterator hides whether the `[DONE]` marker
 * came and ends quietly when the body is cut, so a cut answer (its usage lost) would pass for a whole one;
 * and its JSON parse returns a non-JSON body as text. The SSE framing is `eventsource-parser`'s.
 */
export function createOpenAIProvider(settings: ProviderSettings = {}): ChatProvider {
  const resolved = resolveSettings(settings);
  const baseUrl = (settings.baseUrl ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const maxTokensField =
    new URL(baseUrl).hostname === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens';
  const transport = openAITransport(resolved, baseUrl);

  async function chat(request: ChatRequest): Promise<ChatResponse> {
    const target: CallTarget = { provider: 'openai', baseUrl, model: request.model, apiKey: resolved.apiKey };
    const names = ToolNames.forCall(request.tools, request.messages);
    // The body is Dura's wire mapping (its exact shape is tested); the client sends it as it is.
    const body = openAIRequestBody(request, names, {
      stream: request.onDelta !== undefined,
      maxTokensField,
    }) as unknown as ChatCompletionCreateParams;
    const { client, problem } = await transport();
    return callWithRetries({
      target,
      settings: resolved,
      url: `${baseUrl}/chat/completions`,
      request,
      send: (signal) => client.chat.completions.create(body, { signal }).asResponse(),
      problem,
      readStreamed: async (response, onText) => {
        const stream = new OpenAIStream(names, onText);
        await readSseAnswer(response, (event) => stream.push(event.data));
        return stream.finish(request.model);
      },
      readWhole: (json) => parseOpenAICompletion(json, names, request.model),
    });
  }

  return { provider: 'openai', chat };
}
