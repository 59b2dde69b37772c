import { expect } from 'vitest';
import { DuraError } from '@dura/contracts';
import { startFakeLlmServer, type FakeLlmReply } from '@dura/testing';
import {
  createAnthropicProvider,
  createOpenAIProvider,
  type ChatProvider,
  type ChatRequest,
  type ProviderSettings,
} from '../src/llm/index';

// Shared by the specs that run both adapters against local servers.

export type Provider = 'openai' | 'anthropic';
export const PROVIDERS: Provider[] = ['openai', 'anthropic'];

export const create = (provider: Provider, settings: ProviderSettings): ChatProvider =>
  provider === 'openai' ? createOpenAIProvider(settings) : createAnthropicProvider(settings);

export const request = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'model-test',
  messages: [{ role: 'user', content: 'Say hello.' }],
  tools: [],
  maxTokens: 64,
  ...overrides,
});

export async function failure(promise: Promise<unknown>): Promise<DuraError> {
  const err = await promise.then(
    () => expect.unreachable('the call should have failed'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DuraError);
  return err as DuraError;
}

export const CHARGE_SPEC = {
  name: 'pay.charge',
  description: 'Charge a card.',
  parameters: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
};

/**
 * A fake API of `provider` answering `replies` in order (the last one repeats), and an adapter on it with
 * `apiKey` that records the backoff it sleeps instead of sleeping.
 */
export async function fakeApiAdapter(
  provider: Provider,
  apiKey: string,
  replies: FakeLlmReply[],
  settings: ProviderSettings = {},
) {
  const server = await startFakeLlmServer({
    provider,
    respond: ({ index }) => replies[Math.min(index, replies.length - 1)]!,
  });
  const sleeps: number[] = [];
  const adapter = create(provider, {
    baseUrl: server.url,
    apiKey,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    ...settings,
  });
  return { server, provider: adapter, sleeps, [Symbol.asyncDispose]: () => server.close() };
}

/** Requests to charge 5 dollars with the charge tool: `defaults`, then each call's `overrides` on top. */
export const chargeRequest =
  (defaults: Pick<ChatRequest, 'model' | 'maxTokens'>) =>
  (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
    model: defaults.model,
    messages: [{ role: 'user', content: 'Charge 5 dollars.' }],
    tools: [CHARGE_SPEC],
    maxTokens: defaults.maxTokens,
    ...overrides,
  });
