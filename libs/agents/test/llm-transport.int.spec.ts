import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeLlmReply } from '@dura/testing';
import type { ProviderSettings } from '../src/llm/index';
import { PROVIDERS, failure, fakeApiAdapter, request, type Provider } from './llm-adapter-support';

// The adapters send requests through the providers' official clients; these tests pin what Dura keeps for
// itself: retries (the clients never retry), the classification of failures, and the credentials sent.

const fake = (provider: Provider, replies: FakeLlmReply[], settings: ProviderSettings = {}) =>
  fakeApiAdapter(provider, 'sk-transport-test-key-0123456789', replies, settings);

describe.each(PROVIDERS)('the %s adapter over its official client', (provider) => {
  const overloaded = provider === 'openai' ? 503 : 529;

  it.each([1, 3])(
    `retries HTTP ${overloaded} itself, exactly %i attempts, and the client never retries`,
    async (attempts) => {
      await using t = await fake(provider, [{ kind: 'status', status: overloaded }], {
        maxAttempts: attempts,
      });
      const err = await failure(t.provider.chat(request()));
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
    expect((await t.provider.chat(request())).content).toBe('ok');
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
      const err = await failure(t.provider.chat(request()));
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
    const plain = await failure(t.provider.chat(request()));
    expect(plain.message).toContain('(HTTP 400): upstream refused: model unknown');

    // vLLM's shape: the message at the top level.
    await using v = await fake(provider, [
      {
        kind: 'status',
        status: 400,
        body: { object: 'error', message: 'max_tokens is too large', code: 400 },
      },
    ]);
    const top = await failure(v.provider.chat(request()));
    expect(top.message).toContain('(HTTP 400): max_tokens is too large');
  });

  it('treats an answer that is not the provider shape as model_bad_response after its attempts', async () => {
    await using t = await fake(provider, [{ kind: 'raw', body: JSON.stringify({ hello: 'world' }) }], {
      maxAttempts: 2,
    });
    const err = await failure(t.provider.chat(request()));
    expect(err.code).toBe('model_bad_response');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('does not have the expected shape');
    expect(t.server.requests).toHaveLength(2);
  });
  it('sends the configured headers, and only the key it was given', async () => {
    await using t = await fake(provider, [{ kind: 'message', content: 'ok' }], {
      headers: { 'x-gateway-tenant': 'team-a' },
    });
    await t.provider.chat(request());
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
      expect((await t.provider.chat(request())).content).toBe('ok');
      const { headers } = t.server.requests[0]!;
      expect(headers.authorization).toBeUndefined();
      expect(headers['x-api-key']).toBeUndefined();
      expect(JSON.stringify(headers)).not.toContain('ambient-');
    },
  );
});
