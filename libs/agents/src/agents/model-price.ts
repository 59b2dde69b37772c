import type { Usage } from '@dura/contracts';
import type { ModelPrice } from './definition';

/** What `usage` costs on `model` in US dollars; a model without a price costs 0 (cost limits cannot bind). */
export function priceOf(prices: Record<string, ModelPrice>, model: string, usage: Usage): number {
  const price = prices[model];
  if (!price) return 0;
  return (usage.inputTokens * price.inputPerMTokUsd + usage.outputTokens * price.outputPerMTokUsd) / 1e6;
}
