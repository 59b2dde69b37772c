// P, Q and S: B's measurement (runs.ts) at points along a curve, each on a fresh deployment, so that what a
// step costs can be read against run length, runs in flight and replication.
import { STREAMS } from '@dura/contracts';
import { openDeployment, replicasOf, startServices } from '../deployment';
import { growthOf, historyLoads, inFlightLoads } from '../growth-plan';
import type { Curve } from '../growth-schema';
import type { BenchSizes } from '../options';
import { progress } from '../progress';
import type { BenchScenarios, ThroughputResult } from '../schema';
import { throughput, type RunsLoad } from './runs';

type Sizes = Pick<BenchSizes, 'workers' | 'planners'>;

/** The nats-server processes of S's replicated point: the tests' 3-node cluster. */
export const REPLICATED_NODES = 3;

/** One point: a fresh deployment of `natsNodes` nats-server(s), B's measurement of `load` on it. */
async function point(
  sizes: Sizes,
  load: RunsLoad,
  natsNodes = 1,
): Promise<{ result: ThroughputResult; streamReplicas: number }> {
  await using deployment = await openDeployment(load.prefix, {}, { natsNodes });
  const replicas = replicasOf(sizes);
  await startServices(deployment, replicas);
  const result = await throughput(deployment, load, replicas);
  const runs = await deployment.jsm.streams.info(STREAMS.runs);
  return { result, streamReplicas: runs.config.num_replicas };
}

/** Every load's point in turn (announced under `letter`), and how the last compares with the first. */
async function curve(letter: string, sizes: Sizes, loads: RunsLoad[], note: string): Promise<Curve> {
  const points = [];
  for (const load of loads) {
    progress(`${letter}: ${load.runs} runs × ${load.steps} steps, ${load.inFlight} in flight`);
    points.push((await point(sizes, load)).result);
  }
  return { mode: 'processes', note, points, growth: growthOf(points) };
}

/** P: the same steps in runs of each length, the same runs in flight: does a step cost more late in a run? */
export function historyGrowth(
  sizes: Sizes & Pick<BenchSizes, 'historySteps' | 'historyTotalSteps' | 'historyInFlight'>,
): Promise<Curve> {
  const note =
    'B at each run length on a fresh deployment: runs of echo steps (each a recorded decision and a recorded ' +
    'no-op call), about the same number of steps and the same runs in flight at every length; growth is the ' +
    'longest runs over the shortest';
  return curve('P', sizes, historyLoads(sizes), note);
}

/** Q: B with more and more runs in flight. */
export function inFlightGrowth(
  sizes: Sizes & Pick<BenchSizes, 'inFlightPoints' | 'throughputRuns' | 'throughputSteps'>,
): Promise<Curve> {
  const note =
    'B at each in-flight count on a fresh deployment, with as many runs as --throughput-runs or twice the ' +
    'count, whichever is more; growth is the most in flight over the fewest';
  return curve('Q', sizes, inFlightLoads(sizes), note);
}

/** S: B on one nats-server, then on the 3-node cluster with every stream and bucket R3. */
export async function replicationCost(
  sizes: Sizes & Pick<BenchSizes, 'throughputRuns' | 'throughputSteps' | 'inFlight'>,
): Promise<NonNullable<BenchScenarios['replication']>> {
  const points = [];
  for (const natsNodes of [1, REPLICATED_NODES]) {
    progress(`S: B on ${natsNodes} nats-server node(s)`);
    const load = {
      prefix: `s${natsNodes}`,
      runs: sizes.throughputRuns,
      steps: sizes.throughputSteps,
      inFlight: sizes.inFlight,
    };
    const { result, streamReplicas } = await point(sizes, load, natsNodes);
    points.push({ ...result, natsNodes, streamReplicas });
  }
  return {
    mode: 'processes',
    note:
      'B on a fresh deployment of one nats-server (R1), then of a 3-node JetStream cluster on this machine ' +
      '(every stream and bucket R3, an append acknowledged once a quorum stored it); nats-server is every ' +
      "node's CPU; growth is R3 over R1",
    points,
    growth: growthOf(points),
  };
}
