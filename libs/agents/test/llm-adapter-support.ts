import { expect } from 'vitest';
import { DuraError } from '@dura/contracts';
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
