// What the growth scenarios drive at each point, the fan-out's parent agent, and how a curve's last point
// compares with its first. No I/O: the scenarios in scenarios/growth.ts run these plans.
import type { SubmitRunInput } from '@dura/client';
import { CONTROL_TOOLS } from '@dura/contracts';
import type { Growth } from './growth-schema';
import type { ThroughputResult } from './runs-schema';
import type { RunsLoad } from './scenarios/runs';

/** P: at each run length, about `historyTotalSteps` steps in runs of that length, `historyInFlight` at a time. */
export function historyLoads(sizes: {
  historySteps: number[];
  historyTotalSteps: number;
  historyInFlight: number;
}): RunsLoad[] {
  return sizes.historySteps.map((steps) => {
    const runs = Math.max(1, Math.ceil(sizes.historyTotalSteps / steps));
    return { prefix: `p${steps}`, runs, steps, inFlight: Math.min(sizes.historyInFlight, runs) };
  });
}

/** Q: B at each in-flight count, with at least two runs per lane so every lane starts a second run. */
export function inFlightLoads(sizes: {
  inFlightPoints: number[];
  throughputRuns: number;
  throughputSteps: number;
}): RunsLoad[] {
  return sizes.inFlightPoints.map((inFlight) => ({
    prefix: `q${inFlight}`,
    runs: Math.max(sizes.throughputRuns, 2 * inFlight),
    steps: sizes.throughputSteps,
    inFlight,
  }));
}

/** The registered agent R's parents run. */
export const FANOUT_AGENT = 'bench-fanout';

/** A scripted parent may start at most this many child runs in one decision (its parallel group's limit). */
export const MAX_FANOUT_CHILDREN = 100;

/** Throws, saying the limit, unless one decision may start `children` child runs. */
export function checkFanOutChildren(children: number): void {
  if (!Number.isInteger(children) || children < 1 || children > MAX_FANOUT_CHILDREN)
    throw new Error(
      `--fanout-children must be a whole number from 1 to ${MAX_FANOUT_CHILDREN} (a scripted agent starts at ` +
        `most ${MAX_FANOUT_CHILDREN} calls in one decision), got ${children}`,
    );
}

/**
 * A child run of R: `steps` calls of the no-op `echo` tool. Unlike B's plan, no step names another's result:
 * the parent's plan holds this one, and the parent would resolve such references against its own steps.
 */
export function childPlan(steps: number): Extract<SubmitRunInput['agent'], { kind: 'scripted' }> {
  return {
    kind: 'scripted',
    steps: Array.from({ length: steps }, (_, i) => ({ tool: 'echo', args: { step: i + 1 } })),
  };
}

/**
 * The agents file (`DURA_AGENTS`) of R: a scripted parent whose one decision starts `children` child runs of
 * `steps` echo steps each and waits for them all; it completes once every child has.
 */
export function fanOutAgents(children: number, steps: number) {
  checkFanOutChildren(children);
  const calls = Array.from({ length: children }, (_, i) => ({
    tool: CONTROL_TOOLS.runAgent,
    args: { agent: childPlan(steps), input: { child: i + 1 } },
  }));
  const decision = calls.length === 1 ? calls[0] : { parallel: calls };
  return {
    agents: [{ name: FANOUT_AGENT, version: '1', model: { provider: 'scripted', steps: [decision] } }],
  };
}

/** CPU ms per step of every process group together. */
export function totalCpuMsPerStep(cpuMsPerStep: Record<string, number>): number {
  return Object.values(cpuMsPerStep).reduce((sum, ms) => sum + ms, 0);
}

const ratio = (last: number, first: number): number =>
  first > 0 ? Math.round((last / first) * 1000) / 1000 : 0;

/** The last point over the first, per figure (0 where the first is 0 or there are no points). */
export function growthOf(points: readonly ThroughputResult[]): Growth {
  const first = points[0];
  const last = points.at(-1);
  if (!first || !last) return { cpuMsPerStep: 0, stepCycleP50: 0, stepsPerSecond: 0 };
  return {
    cpuMsPerStep: ratio(totalCpuMsPerStep(last.cpuMsPerStep), totalCpuMsPerStep(first.cpuMsPerStep)),
    stepCycleP50: ratio(last.stepCycleMs.p50, first.stepCycleMs.p50),
    stepsPerSecond: ratio(last.stepsPerSecond, first.stepsPerSecond),
  };
}
