import type { MessageCreateParams } from '@anthropic-ai/sdk/resources/messages';
import { AnthropicStream, anthropicRequestBody, parseAnthropicMessage } from './anthropic-wire';
import { anthropicTransport } from './clients';
import type { CallTarget } from './errors';
import { callWithRetries } from './chat-call';
import { resolveSettings } from './retry';
import { readSseAnswer } from './sse';
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
    // The body is Dura's wire mapping (its exact shape is tested); the client sends it as it is.
    const body = anthropicRequestBody(
      request,
      names,
      request.onDelta !== undefined,
    ) as unknown as MessageCreateParams;
    const { client, problem } = await transport();
    return callWithRetries({
      target,
      settings: resolved,
      url: `${baseUrl}/v1/messages`,
      request,
      send: (signal) => client.messages.create(body, { signal }).asResponse(),
      problem,
      readStreamed: async (response, onText) => {
        const stream = new AnthropicStream(names, onText);
        await readSseAnswer(response, (event) => stream.push(event));
        return stream.finish();
      },
      readWhole: (json) => parseAnthropicMessage(json, names),
    });
  }

  return { provider: 'anthropic', chat };
}
