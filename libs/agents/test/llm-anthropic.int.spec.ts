import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '@dura/contracts';
import { createAnthropicProvider, createProvider } from '../src/llm/index';
import { CHARGE_SPEC, adapterKit, failure, paymentConversation } from './llm-adapter-support';
import { itAnswersAsEveryAdapter } from './llm-adapter-cases';

const API_KEY = 'sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4';
const { setup, request } = adapterKit('anthropic', { apiKey: API_KEY, model: 'claude-test', maxTokens: 512 });

describe('the Anthropic adapter', () => {
  it('sends the system prompt on top, tool_use blocks, and parallel tool results in one user message', async () => {
    await using t = await setup([{ kind: 'message', content: 'done' }]);
    const messages: ChatMessage[] = [
      ...paymentConversation('toolu'),
      { role: 'user', content: 'Also, be brief.' },
    ];
    await t.provider.chat(request({ messages, temperature: 0 }));

    const { body, headers } = t.server.requests[0]!;
    expect(headers['x-api-key']).toBe(API_KEY);
    expect(headers['anthropic-version']).toBe('2023-06-01');
    expect(headers.authorization).toBeUndefined();
    expect(body).toEqual({
      model: 'claude-test',
      max_tokens: 512,
      temperature: 0,
      system: 'You run payments.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Charge 5 and notify.' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Charging.' },
            { type: 'tool_use', id: 'toolu_1', name: 'pay__charge', input: { amount: 5 } },
            {
              type: 'tool_use',
              id: 'toolu_2',
              name: 'demo__notify',
              input: { channel: 'ops', message: 'hi' },
            },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '{"chargeId":"ch_1"}' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'channel closed', is_error: true },
            { type: 'text', text: 'Also, be brief.' },
          ],
        },
      ],
      tools: [{ name: 'pay__charge', description: 'Charge a card.', input_schema: CHARGE_SPEC.parameters }],
    });
  });

  itAnswersAsEveryAdapter({
    provider: 'anthropic',
    apiKey: API_KEY,
    model: 'claude-test',
    maxTokens: 512,
    callId: 'toolu',
    plainLeavesOut: ['tools', 'system'],
    parallelContent: 'On it.',
    lengthStop: 'max_tokens',
    streamBody: { stream: true },
    notJson: { body: '{"type":"message","content":', says: ['after 3 attempts', 'not JSON'] },
    unavailable: {
      reply: {
        kind: 'status',
        status: 529,
        body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      },
      says: 'HTTP 529: Overloaded',
      attempts: 4,
      sleeps: 3,
    },
    rejected: {
      body: {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'max_tokens: must be at most 8192' },
      },
      says: /^anthropic rejected the request \(HTTP 400\): max_tokens: must be at most 8192\./,
    },
    names: {
      parallelCalls: 'maps two parallel tool calls back to Dura names',
      lengthStop: 'reports max_tokens as "length"',
      streamedCalls: 'assembles streamed tool_use blocks from input_json_delta fragments',
    },
  });

  it('counts cached prompt tokens as input', async () => {
    const provider = createAnthropicProvider({
      fetch: () =>
        Promise.resolve(
          Response.json({
            model: 'claude-test',
            content: [{ type: 'text', text: 'hi' }],
            stop_reason: 'end_turn',
            usage: {
              input_tokens: 10,
              cache_creation_input_tokens: 100,
              cache_read_input_tokens: 1000,
              output_tokens: 2,
            },
          }),
        ),
    });
    expect((await provider.chat(request())).usage).toEqual({ inputTokens: 1110, outputTokens: 2 });
  });

  it('waits until the Retry-After date after a 429, then succeeds', async () => {
    const inTwoSeconds = new Date(Date.now() + 2_000).toUTCString();
    await using t = await setup([
      {
        kind: 'status',
        status: 429,
        headers: { 'retry-after': inTwoSeconds },
        body: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests exceeded' } },
      },
      { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
      { kind: 'message', content: 'ok' },
    ]);
    expect((await t.provider.chat(request())).content).toBe('ok');
    expect(t.server.requests).toHaveLength(3);
    // An HTTP date has whole seconds: "in two seconds" is 1 to 2 s from now.
    expect(t.sleeps[0]).toBeGreaterThanOrEqual(900);
    expect(t.sleeps[0]).toBeLessThanOrEqual(2_000);
    expect(t.sleeps[1]).toBe(1_000);
  });

  it('retries overloaded (529) and other server errors, then succeeds', async () => {
    await using t = await setup([
      {
        kind: 'status',
        status: 529,
        body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      },
      { kind: 'status', status: 500 },
      { kind: 'message', content: 'ok' },
    ]);
    expect((await t.provider.chat(request())).content).toBe('ok');
    expect(t.server.requests).toHaveLength(3);
    expect(t.sleeps).toHaveLength(2);
  });

  it('never shows the API key, even when the provider echoes it', async () => {
    await using t = await setup([
      {
        kind: 'status',
        status: 401,
        body: {
          type: 'error',
          error: { type: 'authentication_error', message: `invalid x-api-key ${API_KEY}` },
        },
      },
    ]);
    const err = await failure(t.provider.chat(request()));
    expect(err.code).toBe('model_request_rejected');
    expect(err.message).toContain('rejected the API key (HTTP 401)');
    expect(err.message).toContain('Check the API key');
    expect(err.message).not.toContain(API_KEY);
    expect(JSON.stringify(err)).not.toContain(API_KEY);

    await using streaming = await setup(
      [
        {
          kind: 'raw',
          contentType: 'text/event-stream',
          body: `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: `bad key ${API_KEY}` } })}\n\n`,
        },
      ],
      { maxAttempts: 2 },
    );
    const streamed = await failure(streaming.provider.chat(request({ onDelta: () => undefined })));
    expect(streamed.code).toBe('model_unavailable');
    expect(streamed.message).toContain('api_error: bad key [redacted]');
    expect(streamed.message).not.toContain(API_KEY);
  });

  it('treats a message without its required fields as a bad response', async () => {
    await using t = await setup([{ kind: 'raw', body: JSON.stringify({ type: 'message', content: [] }) }], {
      maxAttempts: 2,
    });
    const err = await failure(t.provider.chat(request()));
    expect(err.code).toBe('model_bad_response');
    expect(err.message).toContain('does not have the expected shape');
  });

  it('retries a stream that reports overloaded_error mid-way, then succeeds', async () => {
    const start = {
      type: 'message_start',
      message: { model: 'claude-test', usage: { input_tokens: 5, output_tokens: 1 } },
    };
    const overloaded = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    await using t = await setup([
      {
        kind: 'raw',
        contentType: 'text/event-stream',
        body: `event: message_start\ndata: ${JSON.stringify(start)}\n\nevent: error\ndata: ${JSON.stringify(overloaded)}\n\n`,
      },
      { kind: 'message', content: 'Recovered' },
    ]);
    const answer = await t.provider.chat(request({ onDelta: () => undefined }));
    expect(answer.content).toBe('Recovered');
    expect(t.server.requests).toHaveLength(2);
  });

  it('treats a stream that ends before message_stop as broken', async () => {
    const start = {
      type: 'message_start',
      message: { model: 'claude-test', usage: { input_tokens: 5, output_tokens: 1 } },
    };
    await using t = await setup(
      [
        {
          kind: 'raw',
          contentType: 'text/event-stream',
          body: `event: message_start\ndata: ${JSON.stringify(start)}\n\n`,
        },
      ],
      { maxAttempts: 2 },
    );
    const err = await failure(t.provider.chat(request({ onDelta: () => undefined })));
    expect(err.code).toBe('model_bad_response');
    expect(err.message).toContain('ended before its message_stop event');
    expect(t.server.requests).toHaveLength(2);
  });

  it('is what createProvider builds for provider "anthropic"', async () => {
    await using t = await setup([{ kind: 'message', content: 'hi' }]);
    const provider = createProvider({ provider: 'anthropic', baseUrl: t.server.url, apiKey: API_KEY });
    expect(provider.provider).toBe('anthropic');
    expect((await provider.chat(request())).content).toBe('hi');
    expect(t.server.requests[0]!.headers['x-api-key']).toBe(API_KEY);
  });
});
