import { describe, expect, it } from 'vitest';
import { AgentsFileSchema } from '@dura/agents';
import { RunRequestSchema } from '@dura/contracts';
import {
  childPlan,
  FANOUT_AGENT,
  fanOutAgents,
  growthOf,
  historyLoads,
  inFlightLoads,
  totalCpuMsPerStep,
} from './growth-plan';
import { DEFAULT_SIZES, parseBenchOptions } from './options';
import type { ThroughputResult } from './runs-schema';
import type { RunsLoad } from './scenarios/runs';

/** Each load as `runs×steps/in flight`. */
const shapes = (loads: readonly RunsLoad[]) => loads.map((l) => `${l.runs}×${l.steps}/${l.inFlight}`);

describe('P: runs of each length', () => {
  it('drives the same steps and runs in flight at 10, 100 and 1,000 steps', () => {
    expect(shapes(historyLoads(DEFAULT_SIZES))).toEqual(['1000×10/10', '100×100/10', '10×1000/10']);
  });

  it('never has more in flight than runs, and at least one run', () => {
    const loads = historyLoads({ historySteps: [7, 50], historyTotalSteps: 20, historyInFlight: 4 });
    expect(shapes(loads)).toEqual(['3×7/3', '1×50/1']);
  });
});

describe('Q: runs in flight', () => {
  it('gives every lane at least two runs, and never fewer runs than B', () => {
    expect(shapes(inFlightLoads(DEFAULT_SIZES))).toEqual(['200×10/50', '1000×10/500', '10000×10/5000']);
  });
});

describe('R: the fan-out agent', () => {
  it('starts every child in one decision, each an inline plan of echo steps', () => {
    const file = AgentsFileSchema.parse(fanOutAgents(3, 2));
    const [agent] = file.agents;
    expect(agent?.name).toBe(FANOUT_AGENT);
    const plan = agent?.model.provider === 'scripted' ? agent.model.steps : [];
    expect(plan).toHaveLength(1);
    const group = plan[0] && 'parallel' in plan[0] ? plan[0].parallel : [];
    expect(group.map((call) => call.tool)).toEqual(['dura.run_agent', 'dura.run_agent', 'dura.run_agent']);
    expect(group[2]?.args).toEqual({ agent: childPlan(2), input: { child: 3 } });
  });

  it('makes one child a plain step, since a parallel group holds two calls or more', () => {
    const file = AgentsFileSchema.parse(fanOutAgents(1, 4));
    const plan = file.agents[0]?.model.provider === 'scripted' ? file.agents[0].model.steps : [];
    expect(plan).toEqual([{ tool: 'dura.run_agent', args: { agent: childPlan(4), input: { child: 1 } } }]);
  });

  it('refuses more children than one decision may start, saying the limit', () => {
    expect(() => fanOutAgents(101, 1)).toThrow(
      /--fanout-children must be a whole number from 1 to 100.*got 101/,
    );
    expect(() => fanOutAgents(0, 1)).toThrow(/got 0/);
  });

  it('gives children plans that name no other step, which the parent would resolve as its own', () => {
    const plan = childPlan(3);
    expect(JSON.stringify(plan)).not.toContain('$steps');
    expect(RunRequestSchema.parse({ v: 1, runId: 'c', agent: plan }).agent).toEqual(plan);
  });
});

const at = (cpu: Record<string, number>, stepCycleP50: number, stepsPerSecond: number) =>
  ({ cpuMsPerStep: cpu, stepCycleMs: { p50: stepCycleP50 }, stepsPerSecond }) as unknown as ThroughputResult;

describe('growth', () => {
  it('adds every process group', () => {
    expect(totalCpuMsPerStep({ planner: 0.5, postgres: 0.25, bench: 0.25 })).toBe(1);
  });

  it('is the last point over the first, per figure', () => {
    const points = [
      at({ planner: 1, projector: 1 }, 4, 1_000),
      at({ planner: 5 }, 9, 1),
      at({ planner: 1.2, projector: 1.2 }, 5, 800),
    ];
    expect(growthOf(points)).toEqual({ cpuMsPerStep: 1.2, stepCycleP50: 1.25, stepsPerSecond: 0.8 });
  });

  it('is 0 where there is nothing to compare with', () => {
    expect(growthOf([])).toEqual({ cpuMsPerStep: 0, stepCycleP50: 0, stepsPerSecond: 0 });
    expect(growthOf([at({}, 0, 0), at({ planner: 1 }, 2, 3)])).toEqual({
      cpuMsPerStep: 0,
      stepCycleP50: 0,
      stepsPerSecond: 0,
    });
  });
});

describe('options', () => {
  it('names the growth scenarios by word and by letter', () => {
    const parsed = parseBenchOptions(['P', 'q', 'fanout', 'S'], {});
    expect(parsed !== 'help' && parsed.scenarios).toEqual(['history', 'inflight', 'fanout', 'replication']);
  });

  it('refuses a fan-out wider than one decision before any scenario runs', () => {
    expect(() => parseBenchOptions(['R', '--fanout-children', '101'], {})).toThrow(/from 1 to 100.*got 101/);
  });

  it('reads their sizes from flags and the environment', () => {
    const parsed = parseBenchOptions(['history', '--history-steps', '5,50'], { BENCH_FANOUT_CHILDREN: '4' });
    if (parsed === 'help') throw new Error('expected options, got help');
    expect(parsed.sizes.historySteps).toEqual([5, 50]);
    expect(parsed.sizes.fanoutChildren).toBe(4);
    expect(parsed.sizes.inFlightPoints).toEqual([50, 500, 5_000]);
  });
});
