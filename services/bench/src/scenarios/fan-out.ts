// R: parent runs, one at a time, each starting child runs in one decision and waiting for all of them; then the
// same child runs submitted directly, as many in flight, on the same deployment: what the parents add.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDeployment, replicasOf, startServices } from '../deployment';
import { childPlan, FANOUT_AGENT, fanOutAgents } from '../growth-plan';
import type { BenchSizes } from '../options';
import { progress } from '../progress';
import type { BenchScenarios } from '../schema';
import { distribution } from '../stats';
import { runTimings } from '../step-timings';
import { measureRuns, throughput, throughputOf } from './runs';

export async function fanOutCost(
  sizes: Pick<BenchSizes, 'workers' | 'planners' | 'fanoutParents' | 'fanoutChildren' | 'fanoutSteps'>,
): Promise<NonNullable<BenchScenarios['fanout']>> {
  const { fanoutParents: parents, fanoutChildren: children, fanoutSteps: childSteps } = sizes;
  const dir = await mkdtemp(join(tmpdir(), 'dura-bench-fanout-'));
  try {
    const agents = join(dir, 'agents.json');
    await writeFile(agents, JSON.stringify(fanOutAgents(children, childSteps)));
    await using deployment = await openDeployment('fanout', { DURA_AGENTS: agents });
    const replicas = replicasOf(sizes);
    await startServices(deployment, replicas);

    progress(
      `R: ${parents} parent run(s), one at a time, each of ${children} child runs × ${childSteps} steps`,
    );
    const load = {
      prefix: 'r',
      runs: parents,
      steps: children * childSteps,
      inFlight: 1,
      request: (runId: string) => ({ runId, agent: { kind: 'agent' as const, name: FANOUT_AGENT } }),
    };
    const fanned = await measureRuns(deployment, load);
    // A parent's calls resolve by its children's reports: only the children's events make steps.
    const parentIds = new Set(fanned.workload.runIds);
    const parentTimings = runTimings(fanned.events.filter((e) => parentIds.has(e.runId)));
    const childTimings = runTimings(fanned.events.filter((e) => !parentIds.has(e.runId)));

    progress(`R: the same ${parents * children} child runs submitted directly, ${children} in flight`);
    const direct = await throughput(
      deployment,
      {
        prefix: 'rd',
        runs: parents * children,
        steps: childSteps,
        inFlight: children,
        request: (runId) => ({ runId, agent: childPlan(childSteps) }),
      },
      replicas,
    );
    return {
      ...throughputOf(load, replicas, childTimings, fanned),
      note:
        'a registered scripted parent whose one decision starts the child runs (dura.run_agent, inline ' +
        'scripted plans of echo steps) and waits for them; steps are the children’s, and CPU over the ' +
        'parents’ window is charged to them; direct: the same child runs with no parent, as many in flight',
      children,
      childSteps,
      parentWallMs: distribution(parentTimings.runWall),
      childWallMs: distribution(childTimings.runWall),
      direct,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
