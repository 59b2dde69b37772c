// The code agent of scenario L: one streamed model call. The planner processes load this module with
// DURA_AGENTS=<its path> and BENCH_MODEL_URL=<the bench's fake OpenAI-compatible server>.
import { defineAgent } from '@dura/code-agents';

export const BENCH_TELLER_AGENT = 'bench-teller';

/** Asks the model once; its answer streams to DURA_TOKENS while it comes. */
export const benchTellerAgent = defineAgent({
  name: BENCH_TELLER_AGENT,
  version: '1',
  tools: [],
  model: {
    provider: 'openai',
    model: 'fake-1',
    baseUrl: process.env.BENCH_MODEL_URL ?? 'http://127.0.0.1:9/v1',
    maxTokens: 100,
  },
  async run(ctx, topic: string) {
    return (await ctx.model({ prompt: `tell ${topic}` })).content;
  },
});
