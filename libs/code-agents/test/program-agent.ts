// Agents generated from a small program, for property tests and the replay benchmark.
import type { JsonValue } from '@dura/contracts';
import { defineAgent, type AnyCodeAgent, type Ctx } from '../src/index';
import { TEST_MODEL } from '../src/testing';

export type Op =
  | { op: 'tool'; n: number }
  | { op: 'fanout'; width: number }
  | { op: 'model' }
  | { op: 'values' }
  | { op: 'sleep' }
  | { op: 'race' };

async function perform(ctx: Ctx, op: Op, i: number): Promise<JsonValue> {
  switch (op.op) {
    case 'tool':
      return ctx.tool('echo', { i, n: op.n });
    case 'fanout':
      return Promise.all(Array.from({ length: op.width }, (_, k) => ctx.tool('echo', { i, k })));
    case 'model':
      return (await ctx.model({ prompt: `op ${i}` })).content;
    case 'values':
      return [ctx.now().toISOString(), ctx.random(), ctx.uuid()];
    case 'sleep':
      await ctx.sleep(5);
      return 'slept';
    case 'race':
      return Promise.race([ctx.tool('echo', { i, side: 'a' }), ctx.tool('echo', { i, side: 'b' })]);
  }
}

/** An agent that performs `ops` in order and returns what each gave. */
export function programAgent(ops: readonly Op[], name = 'program'): AnyCodeAgent {
  return defineAgent({
    name,
    version: '1',
    model: TEST_MODEL,
    tools: ['echo'],
    async run(ctx) {
      const seen: JsonValue[] = [];
      for (const [i, op] of ops.entries()) seen.push(await perform(ctx, op, i));
      return seen;
    },
  });
}
