import { expect } from 'vitest';
import { DuraError, type ChatMessage } from '@dura/contracts';
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

/**
 * A conversation in which the assistant called two tools at once (ids `<prefix>_1` and `<prefix>_2`) and both
 * results came back, the second an error.
 */
export const paymentConversation = (prefix: string): ChatMessage[] => [
  { role: 'system', content: 'You run payments.' },
  { role: 'user', content: 'Charge 5 and notify.' },
  {
    role: 'assistant',
    content: 'Charging.',
    toolCalls: [
      { id: `${prefix}_1`, name: 'pay.charge', arguments: { amount: 5 } },
      { id: `${prefix}_2`, name: 'demo.notify', arguments: { channel: 'ops', message: 'hi' } },
    ],
  },
  { role: 'tool', toolCallId: `${prefix}_1`, name: 'pay.charge', content: '{"chargeId":"ch_1"}' },
  { role: 'tool', toolCallId: `${prefix}_2`, name: 'demo.notify', content: 'channel closed', isError: true },
];

/**
 * How a spec file talks to one adapter: `setup` starts a fake API answering `replies` and an adapter on it
 * (see fakeApiAdapter); `request` is a charge request for `model`, `overrides` on top.
 */
export function adapterKit(
  provider: Provider,
  options: { apiKey: string; model: string; maxTokens: number },
) {
  return {
    setup: (replies: FakeLlmReply[], settings: ProviderSettings = {}) =>
      fakeApiAdapter(provider, options.apiKey, replies, settings),
    request: chargeRequest(options),
  };
}
