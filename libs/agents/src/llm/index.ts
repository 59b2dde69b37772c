import { createAnthropicProvider } from './anthropic';
import { createOpenAIProvider } from './openai';
import type { ChatProvider, ProviderSettings } from './types';

export type { ChatToolSpec, ChatRequest, ChatResponse, ChatProvider, ProviderSettings } from './types';
export { createOpenAIProvider, OPENAI_DEFAULT_BASE_URL } from './openai';
export { createAnthropicProvider, ANTHROPIC_DEFAULT_BASE_URL, ANTHROPIC_VERSION } from './anthropic';
export { toolSpecsFor, controlToolSpecs, isControlTool, CONTROL_TOOL_SCHEMAS } from './tool-specs';
export type { ControlToolName } from './tool-specs';
export { providerToolName, duraToolName, ToolNames } from './tool-names';
export { redact } from './errors';
export { retryAfterMs, backoffMs } from './retry';
export { SseParser } from './sse';
export { liveOptions } from './live-options';
export type { SseEvent } from './sse';

export type ProviderConfig = { provider: 'openai' | 'anthropic' } & ProviderSettings;

/** The adapter for `config.provider`, with the rest of `config` as its settings. */
export function createProvider(config: ProviderConfig): ChatProvider {
  const { provider, ...settings } = config;
  switch (provider) {
    case 'openai':
      return createOpenAIProvider(settings);
    case 'anthropic':
      return createAnthropicProvider(settings);
    default:
      throw new Error(`unknown model provider "${String(provider)}"; use "openai" or "anthropic"`);
  }
}
