import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DuraError } from '@dura/contracts';
import { startFakeLlmServer, type FakeLlmReply } from '@dura/testing';
import {
  createAnthropicProvider,
  createOpenAIProvider,
  type ChatProvider,
  type ChatRequest,
  type ProviderSettings,
} from '../src/llm/index';
import { sseEvent, startBrokenStreamServer, type BrokenStreamReply } from './llm-broken-stream-server';

// The adapters send requests through the providers' official clients; these tests pin what Dura keeps for
// itself: retries (the clients never retry), the classification of failures, and reading the answer.

type Provider = 'openai' | 'anthropic';
const PROVIDERS: Provider[] = ['openai', 'anthropic'];

const create = (provider: Provider, settings: ProviderSettings): ChatProvider =>
  provider === 'openai' ? createOpenAIProvider(settings) : createAnthropicProvider(settings);

const request = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'model-test',
  messages: [{ role: 'user', content: 'Say hello.' }],
  tools: [],
  maxTokens: 64,
  ...overrides,
});

async function fake(provider: Provider, replies: FakeLlmReply[], settings: ProviderSettings = {}) {
  const server = await startFakeLlmServer({
    provider,
    respond: ({ index }) => replies[Math.min(index, replies.length - 1)]!,
  });
  const sleeps: number[] = [];
  const adapter = create(provider, {
    baseUrl: server.url,
    apiKey: 'sk-transport-test-key-0123456789',
    sleep: (ms) => Promise.resolve(void sleeps.push(ms)),
    ...settings,
  });
  return { server, adapter, sleeps, [Symbol.asyncDispose]: () => server.close() };
}

async function broken(provider: Provider, replies: BrokenStreamReply[], settings: ProviderSettings = {}) {
  const server = await startBrokenStreamServer(replies);
  const adapter = create(provider, {
    baseUrl: provider === 'openai' ? `${server.url}/v1` : server.url,
    sleep: () => Promise.resolve(),
    ...settings,
  });
  return { server, adapter, [Symbol.asyncDispose]: () => server[Symbol.asyncDispose]() };
}

async function failure(promise: Promise<unknown>): Promise<DuraError> {
  const err = await promise.then(
    () => expect.unreachable('the call should have failed'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DuraError);
  return err as DuraError;
}

/** A whole streamed answer "Hello there." in the provider's events. */
function wholeAnswer(provider: Provider): string[] {
  if (provider === 'openai')
    return [
      sseEvent({ model: 'model-test', choices: [{ index: 0, delta: { content: 'Hello ' } }] }),
      sseEvent({ model: 'model-test', choices: [{ index: 0, delta: { content: 'there.' } }] }),
      sseEvent({ model: 'model-test', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      sseEvent({ model: 'model-test', choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } }),
      sseEvent('[DONE]'),
    ];
  return [
    ...answerStart(),
    sseEvent(
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'there.' } },
      'content_block_delta',
    ),
    sseEvent({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
    sseEvent(
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } },
      'message_delta',
    ),
    sseEvent({ type: 'message_stop' }, 'message_stop'),
  ];
}

/** The first events of an answer, up to its first text delta "Hello ". */
function partialAnswer(provider: Provider): string[] {
  return provider === 'openai' ? wholeAnswer(provider).slice(0, 1) : answerStart();
}

function answerStart(): string[] {
  return [
    sseEvent(
      {
        type: 'message_start',
        message: { model: 'model-test', usage: { input_tokens: 5, output_tokens: 1 } },
      },
      'message_start',
    ),
    sseEvent(
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      'content_block_start',
    ),
    sseEvent(
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello ' } },
      'content_block_delta',
    ),
  ];
}

describe.each(PROVIDERS)('the %s adapter over its official client', (provider) => {
  const overloaded = provider === 'openai' ? 503 : 529;

  it.each([1, 3])(
    `retries HTTP ${overloaded} itself, exactly %i attempts, and the client never retries`,
    async (attempts) => {
      await using t = await fake(provider, [{ kind: 'status', status: overloaded }], {
        maxAttempts: attempts,
      });
      const err = await failure(t.adapter.chat(request()));
      expect(err.code).toBe('model_unavailable');
      expect(err.retryable).toBe(true);
      expect(err.message).toContain(`after ${attempts === 1 ? '1 attempt' : `${attempts} attempts`}`);
      expect(err.message).toContain(`HTTP ${overloaded}`);
      expect(t.server.requests).toHaveLength(attempts);
      expect(t.sleeps).toHaveLength(attempts - 1);
    },
  );

  it('sends a rate-limited request once per attempt and waits as the provider asked', async () => {
    await using t = await fake(provider, [
      { kind: 'status', status: 429, headers: { 'retry-after': '2' } },
      { kind: 'message', content: 'ok' },
    ]);
    expect((await t.adapter.chat(request())).content).toBe('ok');
    expect(t.server.requests).toHaveLength(2);
    expect(t.sleeps).toEqual([2000]);
  });

  it.each([400, 404, 422])(
    'ends the call at once on HTTP %i: final model_request_rejected, one request',
    async (status) => {
      await using t = await fake(
        provider,
        [{ kind: 'status', status, body: { error: { message: 'no such model' } } }],
        {
          maxAttempts: 5,
        },
      );
      const err = await failure(t.adapter.chat(request()));
      expect(err.code).toBe('model_request_rejected');
      expect(err.retryable).toBe(false);
      expect(err.message).toContain(`(HTTP ${status}): no such model`);
      expect(t.server.requests).toHaveLength(1);
      expect(t.sleeps).toEqual([]);
    },
  );

  it('reads the message of an error body that is not JSON, and of one without an error member', async () => {
    await using t = await fake(provider, [
      { kind: 'raw', status: 400, body: 'upstream refused: model unknown', contentType: 'text/plain' },
    ]);
    const plain = await failure(t.adapter.chat(request()));
    expect(plain.message).toContain('(HTTP 400): upstream refused: model unknown');

    // vLLM's shape: the message at the top level.
    await using v = await fake(provider, [
      {
        kind: 'status',
        status: 400,
        body: { object: 'error', message: 'max_tokens is too large', code: 400 },
      },
    ]);
    const top = await failure(v.adapter.chat(request()));
    expect(top.message).toContain('(HTTP 400): max_tokens is too large');
  });

  it('treats an answer that is not the provider shape as model_bad_response after its attempts', async () => {
    await using t = await fake(provider, [{ kind: 'raw', body: JSON.stringify({ hello: 'world' }) }], {
      maxAttempts: 2,
    });
    const err = await failure(t.adapter.chat(request()));
    expect(err.code).toBe('model_bad_response');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('does not have the expected shape');
    expect(t.server.requests).toHaveLength(2);
  });

  it('retries a stream whose connection is cut mid-answer, and the retry gives the whole answer', async () => {
    await using t = await broken(provider, [
      { chunks: partialAnswer(provider), then: 'cut' },
      { chunks: wholeAnswer(provider), then: 'end' },
    ]);
    const deltas: string[] = [];
    const answer = await t.adapter.chat(request({ onDelta: (text) => deltas.push(text) }));
    expect(answer.content).toBe('Hello there.');
    expect(answer.usage.inputTokens).toBe(5);
    expect(deltas).toEqual(['Hello ', 'Hello ', 'there.']);
    expect(t.server.requests).toHaveLength(2);
  });

  it('gives up on a stream cut every time with a retryable model_unavailable', async () => {
    await using t = await broken(provider, [{ chunks: partialAnswer(provider), then: 'cut' }], {
      maxAttempts: 2,
    });
    const err = await failure(t.adapter.chat(request({ onDelta: () => undefined })));
    expect(err.code).toBe('model_unavailable');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('the connection broke mid-answer');
    expect(t.server.requests).toHaveLength(2);
  });

  it('times out a stream that stalls after its first events, over the whole body, and retries it', async () => {
    await using t = await broken(provider, [{ chunks: partialAnswer(provider), then: 'stall' }], {
      maxAttempts: 2,
      timeoutMs: 300,
    });
    const deltas: string[] = [];
    const err = await failure(t.adapter.chat(request({ onDelta: (text) => deltas.push(text) })));
    expect(err.code).toBe('model_unavailable');
    expect(err.message).toContain('no complete answer within 300 ms');
    expect(deltas).toEqual(['Hello ', 'Hello ']);
    expect(t.server.requests).toHaveLength(2);
  });

  it('stops a stalled stream at once when the caller aborts, without retrying', async () => {
    await using t = await broken(provider, [{ chunks: partialAnswer(provider), then: 'stall' }]);
    const controller = new AbortController();
    const call = t.adapter.chat(
      request({ signal: controller.signal, onDelta: () => controller.abort(new Error('run cancelled')) }),
    );
    const err = await failure(call);
    expect(err.code).toBe('model_call_aborted');
    expect(err.message).toContain('run cancelled');
    expect(t.server.requests).toHaveLength(1);
  });

  it('treats a stream event that is not JSON as model_bad_response after its attempts', async () => {
    await using t = await broken(
      provider,
      [
        {
          chunks: [sseEvent('{"choices": [', provider === 'openai' ? undefined : 'message_start')],
          then: 'end',
        },
      ],
      {
        maxAttempts: 3,
      },
    );
    const err = await failure(t.adapter.chat(request({ onDelta: () => undefined })));
    expect(err.code).toBe('model_bad_response');
    expect(err.message).toContain('a stream event is not JSON');
    expect(t.server.requests).toHaveLength(3);
  });

  it('sends the configured headers, and only the key it was given', async () => {
    await using t = await fake(provider, [{ kind: 'message', content: 'ok' }], {
      headers: { 'x-gateway-tenant': 'team-a' },
    });
    await t.adapter.chat(request());
    const { headers } = t.server.requests[0]!;
    expect(headers['x-gateway-tenant']).toBe('team-a');
    if (provider === 'openai') expect(headers.authorization).toBe('Bearer sk-transport-test-key-0123456789');
    else {
      expect(headers['x-api-key']).toBe('sk-transport-test-key-0123456789');
      expect(headers.authorization).toBeUndefined();
    }
  });
});

describe('credentials from the environment', () => {
  const names = [
    'OPENAI_API_KEY',
    'OPENAI_ORG_ID',
    'OPENAI_PROJECT_ID',
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
  ];
  const saved = new Map<string, string | undefined>();
  beforeEach(() => {
    for (const name of names) {
      saved.set(name, process.env[name]);
      process.env[name] = `ambient-${name.toLowerCase()}`;
    }
  });
  afterEach(() => {
    for (const [name, value] of saved)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });

  it.each(PROVIDERS)(
    'are never sent by the %s adapter: without a configured key, no key at all',
    async (provider) => {
      await using t = await fake(provider, [{ kind: 'message', content: 'ok' }], { apiKey: undefined });
      expect((await t.adapter.chat(request())).content).toBe('ok');
      const { headers } = t.server.requests[0]!;
      expect(headers.authorization).toBeUndefined();
      expect(headers['x-api-key']).toBeUndefined();
      expect(JSON.stringify(headers)).not.toContain('ambient-');
    },
  );
});
