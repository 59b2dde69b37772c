import { describe, expect, it } from 'vitest';
import { freePort } from '@dura/testing';
import { createOpenAIProvider } from '../src/llm/index';
import { CHARGE_SPEC, adapterKit, failure, paymentConversation } from './llm-adapter-support';
import { itAnswersAsEveryAdapter } from './llm-adapter-cases';

const API_KEY = 'sk-test-4f9a8b7c6d5e4f3a2b1c';
const { setup, request } = adapterKit('openai', { apiKey: API_KEY, model: 'gpt-test', maxTokens: 256 });

describe('the OpenAI adapter', () => {
  it('sends tools, messages and tool results in the Chat Completions shape', async () => {
    await using t = await setup([{ kind: 'message', content: 'done' }]);
    const messages = paymentConversation('call');
    await t.provider.chat(request({ messages, temperature: 0.2 }));

    expect(t.server.requests).toHaveLength(1);
    const { body, headers } = t.server.requests[0]!;
    expect(headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(body).toEqual({
      model: 'gpt-test',
      max_tokens: 256,
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'You run payments.' },
        { role: 'user', content: 'Charge 5 and notify.' },
        {
          role: 'assistant',
          content: 'Charging.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'pay__charge', arguments: '{"amount":5}' } },
            {
              id: 'call_2',
              type: 'function',
              function: { name: 'demo__notify', arguments: '{"channel":"ops","message":"hi"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"chargeId":"ch_1"}' },
        { role: 'tool', tool_call_id: 'call_2', content: 'Error: channel closed' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'pay__charge',
            description: 'Charge a card.',
            parameters: CHARGE_SPEC.parameters,
          },
        },
      ],
    });
  });

  itAnswersAsEveryAdapter({
    provider: 'openai',
    apiKey: API_KEY,
    model: 'gpt-test',
    maxTokens: 256,
    callId: 'call',
    plainLeavesOut: ['tools'],
    lengthStop: 'length',
    streamBody: { stream: true, stream_options: { include_usage: true } },
    notJson: { body: '<html>gateway page</html>', says: ['not JSON'] },
    unavailable: {
      reply: { kind: 'status', status: 502, body: { error: { message: 'bad gateway' } } },
      says: 'HTTP 502: bad gateway',
      attempts: 3,
    },
    rejected: {
      body: {
        error: { message: "Invalid value for 'max_tokens': too large", type: 'invalid_request_error' },
      },
      says: /^openai rejected the request \(HTTP 400\): Invalid value for 'max_tokens'/,
    },
    names: {
      parallelCalls: 'maps two parallel tool calls back to Dura names with parsed arguments',
      lengthStop: 'reports a length stop as "length"',
      streamedCalls: 'assembles streamed tool calls from their fragments',
    },
  });

  it('waits as long as Retry-After asks after a 429, then succeeds', async () => {
    await using t = await setup([
      {
        kind: 'status',
        status: 429,
        headers: { 'retry-after': '1' },
        body: { error: { message: 'Rate limit reached' } },
      },
      { kind: 'message', content: 'ok' },
    ]);
    const answer = await t.provider.chat(request());
    expect(answer.content).toBe('ok');
    expect(t.server.requests).toHaveLength(2);
    expect(t.sleeps).toEqual([1000]);
  });

  it('honours retry-after-ms over Retry-After', async () => {
    await using t = await setup([
      { kind: 'status', status: 429, headers: { 'retry-after-ms': '250', 'retry-after': '1' } },
      { kind: 'message', content: 'ok' },
    ]);
    await t.provider.chat(request());
    expect(t.sleeps).toEqual([250]);
  });

  it('retries server errors with growing, jittered backoff, then succeeds', async () => {
    await using t = await setup(
      [
        { kind: 'status', status: 503 },
        { kind: 'status', status: 500 },
        { kind: 'message', content: 'ok' },
      ],
      { initialBackoffMs: 100 },
    );
    expect((await t.provider.chat(request())).content).toBe('ok');
    expect(t.server.requests).toHaveLength(3);
    expect(t.sleeps).toHaveLength(2);
    expect(t.sleeps[0]).toBeGreaterThanOrEqual(50);
    expect(t.sleeps[0]).toBeLessThanOrEqual(100);
    expect(t.sleeps[1]).toBeGreaterThanOrEqual(100);
    expect(t.sleeps[1]).toBeLessThanOrEqual(200);
  });

  it('never shows the API key, even when the provider echoes it', async () => {
    await using t = await setup([
      {
        kind: 'status',
        status: 401,
        body: { error: { message: `Incorrect API key provided: ${API_KEY}.` } },
      },
    ]);
    const err = await failure(t.provider.chat(request()));
    expect(err.code).toBe('model_request_rejected');
    expect(err.message).toContain('Check the API key');
    expect(err.message).not.toContain(API_KEY);
    expect(JSON.stringify(err)).not.toContain(API_KEY);
    expect(String((err.cause as Error).message)).not.toContain(API_KEY);

    await using echoing = await setup([
      {
        kind: 'raw',
        status: 500,
        body: `upstream said: key=${API_KEY} masked=${API_KEY.slice(0, 10)}***1b1c`,
      },
    ]);
    const unavailable = await failure(echoing.provider.chat(request()));
    expect(unavailable.code).toBe('model_unavailable');
    expect(unavailable.message).toContain('upstream said');
    expect(unavailable.message).not.toContain(API_KEY);
    expect(unavailable.message).not.toContain(API_KEY.slice(0, 10));
  });

  it('treats tool arguments that are not JSON as a bad response, and recovers when a retry is good', async () => {
    await using t = await setup([
      { kind: 'message', toolCalls: [{ name: 'pay__charge', arguments: '{"amount": 5' }] },
      { kind: 'message', toolCalls: [{ name: 'pay__charge', arguments: { amount: 5 } }] },
    ]);
    const answer = await t.provider.chat(request());
    expect(answer.toolCalls).toEqual([{ id: 'call_fake_1_0', name: 'pay.charge', arguments: { amount: 5 } }]);
    expect(t.server.requests).toHaveLength(2);

    await using bad = await setup(
      [{ kind: 'message', toolCalls: [{ name: 'pay__charge', arguments: '[1,2' }] }],
      {
        maxAttempts: 2,
      },
    );
    const err = await failure(bad.provider.chat(request()));
    expect(err.code).toBe('model_bad_response');
    expect(err.message).toContain('the arguments of tool call "pay.charge" are not valid JSON');
  });

  it('retries a stream cut off before [DONE]', async () => {
    const cut = 'data: {"choices":[{"index":0,"delta":{"content":"Hal"},"finish_reason":null}]}\n\n';
    await using t = await setup([
      { kind: 'raw', body: cut, contentType: 'text/event-stream' },
      { kind: 'message', content: 'Whole answer' },
    ]);
    const deltas: string[] = [];
    const answer = await t.provider.chat(request({ onDelta: (text) => deltas.push(text) }));
    expect(answer.content).toBe('Whole answer');
    expect(deltas[0]).toBe('Hal');
    expect(deltas.slice(1).join('')).toBe('Whole answer');
  });

  it('stops at once when the caller aborts, without retrying', async () => {
    await using t = await setup([{ kind: 'message', content: 'late', delayMs: 10_000 }]);
    const controller = new AbortController();
    const call = t.provider.chat(request({ signal: controller.signal }));
    while (t.server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    controller.abort(new Error('run cancelled'));
    const err = await failure(call);
    expect(err.code).toBe('model_call_aborted');
    expect(err.message).toContain('run cancelled');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(t.server.requests).toHaveLength(1);
    expect(t.sleeps).toEqual([]);
  });

  it('counts an unreachable server and a too-slow answer as unavailable', async () => {
    const port = await freePort();
    const sleeps: number[] = [];
    const offline = createOpenAIProvider({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      maxAttempts: 2,
      sleep: (ms) => Promise.resolve(void sleeps.push(ms)),
    });
    const refused = await failure(offline.chat(request()));
    expect(refused.code).toBe('model_unavailable');
    expect(refused.message).toContain(`could not reach http://127.0.0.1:${port}/v1/chat/completions`);
    expect(sleeps).toHaveLength(1);

    await using slow = await setup([{ kind: 'message', content: 'late', delayMs: 5_000 }], {
      timeoutMs: 200,
      maxAttempts: 2,
    });
    const timedOut = await failure(slow.provider.chat(request()));
    expect(timedOut.code).toBe('model_unavailable');
    expect(timedOut.message).toContain('no complete answer within 200 ms');
    expect(slow.server.requests).toHaveLength(2);
  });

  it('asks OpenAI itself for max_completion_tokens', async () => {
    const bodies: unknown[] = [];
    const provider = createOpenAIProvider({
      apiKey: API_KEY,
      fetch: (_url, init) => {
        bodies.push(JSON.parse(init?.body as string));
        return Promise.resolve(
          Response.json({ model: 'gpt-x', choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }] }),
        );
      },
    });
    const answer = await provider.chat(request({ tools: [] }));
    expect(bodies[0]).toMatchObject({ max_completion_tokens: 256 });
    expect(bodies[0]).not.toHaveProperty('max_tokens');
    expect(answer.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });
});
