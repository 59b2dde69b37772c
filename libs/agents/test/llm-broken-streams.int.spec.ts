import { describe, expect, it } from 'vitest';
import type { ProviderSettings } from '../src/llm/index';
import { PROVIDERS, create, failure, request, type Provider } from './llm-adapter-support';
import { sseEvent, startBrokenStreamServer, type BrokenStreamReply } from './llm-broken-stream-server';

// Streams that break the way networks and proxies break them: Dura, not the official clients, reads the body,
// so a cut or stalled answer is never taken for a whole one.

async function broken(provider: Provider, replies: BrokenStreamReply[], settings: ProviderSettings = {}) {
  const server = await startBrokenStreamServer(replies);
  const adapter = create(provider, {
    baseUrl: provider === 'openai' ? `${server.url}/v1` : server.url,
    sleep: () => Promise.resolve(),
    ...settings,
  });
  return { server, adapter, [Symbol.asyncDispose]: () => server[Symbol.asyncDispose]() };
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
describe.each(PROVIDERS)('the %s adapter reading a broken stream', (provider) => {
  it('retries a stream whose connection is cut mid-answer, and the retry gives the whole answer', async () => {
    await using t = await broken(provider, [
      { chunks: partialAnswer(provider), then: 'cut' },
      { chunks: wholeAnswer(provider), then: 'end' },
    ]);
    const deltas: string[] = [];
    const answer = await t.adapter.chat(
      request({ onDelta: (text) => deltas.push(text), onRestart: () => deltas.push('<restart>') }),
    );
    expect(answer.content).toBe('Hello there.');
    expect(answer.usage.inputTokens).toBe(5);
    // The retry's text starts over, and the caller is told so before it comes.
    expect(deltas).toEqual(['Hello ', '<restart>', 'Hello ', 'there.']);
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
});
