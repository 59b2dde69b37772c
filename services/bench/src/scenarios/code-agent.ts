// The code agent of scenario J. The bench decides it in-process and the planner processes it starts load this
// module with DURA_AGENTS=<its path>.
import * as z from 'zod';
import { defineAgent } from '@dura/code-agents';

export const BENCH_CODE_AGENT = 'bench-code';

/** `steps` calls of the no-op `echo` tool, one a step; returns the sum of what they echoed. */
export const benchCodeAgent = defineAgent({
  name: BENCH_CODE_AGENT,
  version: '1',
  tools: ['echo'],
  input: z.object({ steps: z.number().int().positive() }),
  async run(ctx, { steps }) {
    let sum = 0;
    for (let i = 1; i <= steps; i += 1) {
      const echoed = await ctx.tool('echo', { i });
      sum += (echoed as { i: number }).i;
    }
    return { sum };
  },
});
