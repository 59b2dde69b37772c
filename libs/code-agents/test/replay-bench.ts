// Per-step cost of a 1,000-step code agent: driven with its continuation kept, and resumed cold (replayed
// from the start of its log). Prints JSON; run with `npm run bench -w @dura/code-agents`.
import { performance } from 'node:perf_hooks';
import { decideNext } from '../src/engine';
import { programAgent, type Op } from './program-agent';
import { countingFresh, SimRun } from '../src/testing';

const STEPS = Number(process.env.STEPS ?? 1000);
const ops: Op[] = Array.from({ length: STEPS }, (_, n) => ({ op: 'tool', n }));
const agent = programAgent(ops, 'bench');

async function measure(live: boolean) {
  const run = new SimRun(agent, { tools: { echo: (args) => args }, live });
  const started = performance.now();
  await run.drive();
  return { run, ms: performance.now() - started };
}

const cached = await measure(true);
const log = cached.run.events.filter(
  (e) => e.seq < cached.run.events.findLast((x) => x.type === 'thought')!.seq,
);
const coldStarted = performance.now();
await decideNext(agent, log, { fresh: countingFresh() });
const coldMs = performance.now() - coldStarted;
// Pure replay at every step costs the sum of all prefixes: measured on a tenth of the steps to stay quick.
const shortAgent = programAgent(ops.slice(0, STEPS / 10), 'bench-short');
const pureStarted = performance.now();
await new SimRun(shortAgent, { tools: { echo: (args) => args }, live: false }).drive();
const pureMs = performance.now() - pureStarted;

const round = (n: number) => Math.round(n * 1000) / 1000;
console.log(
  JSON.stringify(
    {
      steps: STEPS,
      cachedContinuation: {
        totalMs: round(cached.ms),
        perStepMs: round(cached.ms / STEPS),
        engineOnlyPerStepMs: round(cached.run.decideMs / STEPS),
      },
      coldResume: { totalMs: round(coldMs), perReplayedStepMs: round(coldMs / STEPS) },
      pureReplayEveryStep: {
        steps: STEPS / 10,
        totalMs: round(pureMs),
        perStepMs: round(pureMs / (STEPS / 10)),
      },
      note: 'totals include the simulated planner (fold, decider, tools); engineOnly and cold are the engine alone',
    },
    null,
    2,
  ),
);
