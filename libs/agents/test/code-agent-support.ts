// Shared by the specs of code agents that ask a model through ctx.model.
import { defineAgent, type AnyCodeAgent } from '@dura/code-agents';

/** The agents' model settings: an OpenAI-compatible model that no test really calls. */
export const MODEL = { provider: 'openai' as const, model: 'fake-1', maxTokens: 100 };

/**
 * The code agent `twice`: asks the model `first`, then a second prompt that names the first answer (with
 * `second` on top, such as another model), and returns the second answer.
 */
export function twiceAgent(second: { model?: string; maxTokens?: number } = {}): AnyCodeAgent {
  return defineAgent({
    name: 'twice',
    version: '1',
    model: MODEL,
    tools: [],
    async run(ctx) {
      const a = await ctx.model({ prompt: 'first' });
      const b = await ctx.model({ prompt: `second after ${a.content}`, ...second });
      return b.content;
    },
  });
}
