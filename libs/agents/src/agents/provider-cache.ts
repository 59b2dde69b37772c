import { createProvider, type ChatProvider, type ProviderSettings } from '../llm';

/** The connection settings of a model, as JSON and code agents declare them. */
export interface ProviderSettingsOf {
  provider: 'openai' | 'anthropic';
  baseUrl?: string | undefined;
  apiKeyEnv?: string | undefined;
  maxAttempts?: number | undefined;
  timeoutMs?: number | undefined;
}

/** One provider client per distinct settings, built through the LLM adapters (or `build`, for tests). */
export function providerCache<S extends ProviderSettingsOf>(
  env: Record<string, string | undefined>,
  build?: (settings: S) => ChatProvider,
  onRateLimited?: ProviderSettings['onRateLimited'],
): (settings: S) => ChatProvider {
  const providers = new Map<string, ChatProvider>();
  return (settings) => {
    const key = JSON.stringify(settings);
    let provider = providers.get(key);
    if (!provider) {
      const apiKey = settings.apiKeyEnv ? env[settings.apiKeyEnv] : undefined;
      provider =
        build?.(settings) ??
        createProvider({
          provider: settings.provider,
          ...(settings.baseUrl ? { baseUrl: settings.baseUrl } : {}),
          ...(apiKey ? { apiKey } : {}),
          ...(settings.maxAttempts ? { maxAttempts: settings.maxAttempts } : {}),
          ...(settings.timeoutMs ? { timeoutMs: settings.timeoutMs } : {}),
          ...(onRateLimited ? { onRateLimited } : {}),
        });
      providers.set(key, provider);
    }
    return provider;
  };
}
