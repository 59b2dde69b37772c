// P, Q and S: B's measurement (runs.ts) at points along a curve, each on a fresh deployment (at full size), so
// that what a step costs can be read against run length, runs in flight and replication.
import { STREAMS } from '@dura/contracts';
import { replicasOf } from '../deployment';
import { growthOf, historyLoads, inFlightLoads } from '../growth-plan';
import type { Curve } from '../growth-schema';
import type { BenchSizes } from '../options';
import { pointDeployments, type PointDeployments } from '../point-deployments';
import { progress } from '../progress';
import type { BenchScenarios, ThroughputResult } from '../schema';
import { throughput, type RunsLoad } from './runs';

type Sizes = Pick<BenchSizes, 'workers' | 'planners' | 'pointsPerDeployment'>;

/** The nats-server processes of S's replicated point: the tests' 3-node cluster. */
export const REPLICATED_NODES = 3;

/** One point: B's measurement of `load` on the next deployment of `deployments`, of `natsNodes` nats-server(s). */
async function point(
  deployments: PointDeployments,
  sizes: Sizes,
  load: RunsLoad,
  natsNodes = 1,
): Promise<{ result: ThroughputResult; streamReplicas: number }> {
  const replicas = replicasOf(sizes);
  const deployment = await deployments.next(load.prefix, replicas, natsNodes);
  const result = await throughput(deployment, load, replicas);
  const runs = await deployment.jsm.streams.info(STREAMS.runs);
  return { result, streamReplicas: runs.config.num_replicas };
}

/** Where a curve's points ran, for its note. */
function deployedNote(sizes: Sizes): string {
  const n = sizes.pointsPerDeployment;
  return n > 1
    ? `, up to ${n} points in turn on one deployment (--points-per-deployment ${n})`
    : ' on a fresh deployment';
}

/** Every load's point in turn (announced under `letter`), and how the last compares with the first. */
async function curve(letter: string, sizes: Sizes, loads: RunsLoad[], note: string): Promise<Curve> {
  await using deployments = pointDeployments(sizes.pointsPerDeployment);
  const points = [];
  for (const load of loads) {
    progress(`${letter}: ${load.runs} runs × ${load.steps} steps, ${load.inFlight} in flight`);
    points.push((await point(deployments, sizes, load)).result);
  }
  return { mode: 'processes', note, points, growth: growthOf(points) };
}

/** P: the same steps in runs of each length, the same runs in flight: does a step cost more late in a run? */
export function historyGrowth(
  sizes: Sizes & Pick<BenchSizes, 'historySteps' | 'historyTotalSteps' | 'historyInFlight'>,
): Promise<Curve> {
  const note =
    `B at each run length${deployedNote(sizes)}: runs of echo steps (each a recorded decision and a ` +
    'recorded no-op call), about the same number of steps and the same runs in flight at every length; growth ' +
    'is the longest runs over the shortest';
  return curve('P', sizes, historyLoads(sizes), note);
}

/** Q: B with more and more runs in flight. */
export function inFlightGrowth(
  sizes: Sizes & Pick<BenchSizes, 'inFlightPoints' | 'throughputRuns' | 'throughputSteps'>,
): Promise<Curve> {
  const note =
    `B at each in-flight count${deployedNote(sizes)}, with as many runs as --throughput-runs or twice ` +
    'the count, whichever is more; growth is the most in flight over the fewest';
  return curve('Q', sizes, inFlightLoads(sizes), note);
}

/** S: B on one nats-server, then on the 3-node cluster with every stream and bucket R3. */
export async function replicationCost(
  sizes: Sizes & Pick<BenchSizes, 'throughputRuns' | 'throughputSteps' | 'inFlight'>,
): Promise<NonNullable<BenchScenarios['replication']>> {
  // The two points differ in their nats-server nodes, so each opens a deployment of its own.
  await using deployments = pointDeployments(sizes.pointsPerDeployment);
  const points = [];
  for (const natsNodes of [1, REPLICATED_NODES]) {
    progress(`S: B on ${natsNodes} nats-server node(s)`);
    const load = {
      prefix: `s${natsNodes}`,
      runs: sizes.throughputRuns,
      steps: sizes.throughputSteps,
      inFlight: sizes.inFlight,
    };
    const { result, streamReplicas } = await point(deployments, sizes, load, natsNodes);
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
