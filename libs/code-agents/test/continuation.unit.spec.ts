import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideNext, type ResolvedModelRequest } from '../src/engine';
import { programAgent, type Op } from './program-agent';
import { countingFresh, SimRun } from '../src/testing';

const arbOp: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('tool' as const), n: fc.nat(9) }),
  fc.record({ op: fc.constant('fanout' as const), width: fc.integer({ min: 1, max: 4 }) }),
  fc.constant({ op: 'model' as const }),
  fc.constant({ op: 'values' as const }),
  fc.constant({ op: 'sleep' as const }),
  fc.constant({ op: 'race' as const }),
);
const world = (live: boolean, fresh = true) => ({
  tools: { echo: (args: Record<string, unknown>) => args as never },
  model: (request: ResolvedModelRequest) => `answer ${JSON.stringify(request.messages)}`,
  ...(fresh ? { fresh: countingFresh() } : {}),
  live,
});

describe('a live continuation and pure replay', () => {
  it('given any program, when driven live or by replay, then the logs are the same event for event', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(arbOp, { maxLength: 8 }), async (ops) => {
        const agent = programAgent(ops);
        const replayed = new SimRun(agent, world(false));
        const live = new SimRun(agent, world(true));
        await replayed.drive();
        await live.drive();

        expect(replayed.state.status).toBe('completed');
        expect(live.events.map((e) => [e.type, e.data])).toEqual(
          replayed.events.map((e) => [e.type, e.data]),
        );
      }),
      { numRuns: 60 },
    );
  });

  it('given any program, when each recorded thought is decided again from the log before it, then it is the same', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(arbOp, { minLength: 1, maxLength: 6 }), async (ops) => {
        const agent = programAgent(ops);
        const run = new SimRun(agent, world(true, false));
        await run.drive();
        const thoughts = run.events.filter((e) => e.type === 'thought');
        for (const thought of thoughts) {
          const before = run.events.filter((e) => e.seq < thought.seq);
          // Values drawn in a step are in its thought; a redecision draws them again from the same counter.
          const again = await decideNext(agent, before, { fresh: countingFresh() });
          if (again.kind === 'model') continue; // the model answer is not in the log before its thought
          expect(again).toEqual({ kind: 'decide', thought: thought.data });
        }
      }),
      { numRuns: 40 },
    );
  });
});
