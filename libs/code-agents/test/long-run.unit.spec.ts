import { describe, expect, it } from 'vitest';
import { decideNext } from '../src/engine';
import { programAgent, type Op } from './program-agent';
import { countingFresh, SimRun } from '../src/testing';

describe('a long agent', () => {
  it('given 1,000 recorded steps, when the last is decided again by cold replay, then it is the recorded thought', async () => {
    const ops: Op[] = Array.from({ length: 1000 }, (_, n) => ({ op: 'tool', n }));
    const agent = programAgent(ops, 'long');
    const run = new SimRun(agent, { tools: { echo: (args) => args }, live: true });
    const end = await run.drive();
    expect(end.state.status).toBe('completed');
    expect(end.state.steps).toBe(1000);

    const last = run.events.findLast((e) => e.type === 'thought')!;
    const again = await decideNext(
      agent,
      run.events.filter((e) => e.seq < last.seq),
      { fresh: countingFresh() },
    );

    expect(again).toEqual({ kind: 'decide', thought: last.data });
    expect(last.data.decision).toMatchObject({ kind: 'complete' });
  });
});
