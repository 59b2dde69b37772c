import { openDeployment, replicasOf, startServices } from './deployment';
import { probeEnvironment } from './environment';
import type { BenchOptions } from './options';
import { pointDeployments } from './point-deployments';
import { progress } from './progress';
import { BenchReportSchema, type BenchReport, type BenchScenarios } from './schema';
import { round } from './stats';
import { idleCost } from './scenarios/idle';
import { listQueries } from './scenarios/list';
import { roundTripFloors } from './scenarios/floors';
import { projectorCatchUp } from './scenarios/projector';
import { resumeCost } from './scenarios/resume';
import { stepLatency, throughput } from './scenarios/runs';
import { waitsCost } from './scenarios/waits';
import { codeAgentCost } from './scenarios/code';
import { cliStartup } from './scenarios/cli';
import { tokenLatency } from './scenarios/tokens';
import { aiSdkOverhead } from './scenarios/ai-sdk';
import { admissionCost } from './scenarios/admission';
import { capacityCost } from './scenarios/capacity';
import { historyGrowth, inFlightGrowth, replicationCost } from './scenarios/growth';
import { fanOutCost } from './scenarios/fan-out';

/** A and B on one deployment of one projector, one gateway and `planners` planners. */
async function latencyAndThroughput(options: BenchOptions, scenarios: BenchScenarios): Promise<void> {
  const { sizes } = options;
  const wantA = options.scenarios.includes('latency');
  const wantB = options.scenarios.includes('throughput');
  if (!wantA && !wantB) return;
  await using deployment = await openDeployment('runs');
  // With workers, each runs a planner and a gateway: the replica counts say so.
  const replicas = replicasOf(sizes);
  await startServices(deployment, replicas);
  if (wantA) {
    progress(`A: ${sizes.latencyRuns} runs × ${sizes.latencySteps} steps, one at a time`);
    scenarios.latency = await stepLatency(deployment, {
      prefix: 'lat',
      runs: sizes.latencyRuns,
      steps: sizes.latencySteps,
    });
  }
  if (wantB) {
    progress(`B: ${sizes.throughputRuns} runs × ${sizes.throughputSteps} steps, ${sizes.inFlight} in flight`);
    scenarios.throughput = await throughput(
      deployment,
      { prefix: 'thr', runs: sizes.throughputRuns, steps: sizes.throughputSteps, inFlight: sizes.inFlight },
      replicas,
    );
  }
}

/** F: B again at each gateway count, each on a fresh deployment (or in turn on one: `pointsPerDeployment`). */
async function scaling(options: BenchOptions): Promise<NonNullable<BenchScenarios['scaling']>> {
  const { sizes } = options;
  await using deployments = pointDeployments(sizes.pointsPerDeployment);
  const points = [];
  for (const gateways of sizes.gateways) {
    progress(`F: ${gateways} gateway(s), ${sizes.planners} planner(s)`);
    const replicas = { gateways, planners: sizes.planners };
    const deployment = await deployments.next(`scale${gateways}`, replicas);
    points.push(
      await throughput(
        deployment,
        {
          prefix: `f${gateways}`,
          runs: sizes.throughputRuns,
          steps: sizes.throughputSteps,
          inFlight: sizes.inFlight,
        },
        replicas,
      ),
    );
  }
  return { mode: 'processes', points };
}

/** Runs the chosen scenarios in the order and returns the validated report. */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const began = performance.now();
  const startedAt = new Date().toISOString();
  progress('probing machine, versions and durability settings');
  const environment = await probeEnvironment();
  const scenarios: BenchScenarios = {};
  const want = (name: BenchOptions['scenarios'][number]) => options.scenarios.includes(name);
  await latencyAndThroughput(options, scenarios);
  if (want('resume')) {
    progress(`C: resume of ${options.sizes.resumeEvents.join(', ')}-event runs`);
    scenarios.resume = await resumeCost(options.sizes);
  }
  if (want('idle')) {
    progress(`D: ${options.sizes.idleRuns} suspended runs, ${options.sizes.idleSeconds} s idle`);
    scenarios.idle = await idleCost(options.sizes);
  }
  if (want('projector')) {
    progress(`E: projector catch-up over ${options.sizes.projectorEvents} events`);
    scenarios.projector = await projectorCatchUp(options.sizes);
  }
  if (want('scaling')) scenarios.scaling = await scaling(options);
  if (want('floors')) {
    progress(`G: round-trip floors, ${options.sizes.floorSamples} samples each`);
    scenarios.floors = await roundTripFloors(options.sizes);
  }
  if (want('list')) {
    progress(`H: GET /runs over ${options.sizes.listRuns} projected runs`);
    scenarios.list = await listQueries(options.sizes);
  }
  if (want('waits')) {
    progress(
      `I: ${options.sizes.waitRuns} real runs waiting on signals and timers, ${options.sizes.idleSeconds} s idle`,
    );
    scenarios.waits = await waitsCost(options.sizes);
  }
  if (want('code')) {
    progress(`J: a ${options.sizes.codeSteps}-step code agent, continuation kept, then resumed cold`);
    scenarios.code = await codeAgentCost(options.sizes);
  }
  if (want('cli')) {
    progress(`K: dura command start-up, ${options.sizes.cliRuns} runs of each`);
    scenarios.cli = await cliStartup(options.sizes);
  }
  if (want('tokens')) {
    progress(`L: first token through GET /runs/:id/tokens, ${options.sizes.tokenRuns} runs`);
    scenarios.tokens = await tokenLatency(options.sizes);
  }
  if (want('aisdk')) {
    progress(`M: ${options.sizes.aisdkSamples} generateText calls, plain and as durable steps`);
    scenarios.aisdk = await aiSdkOverhead(options.sizes);
  }
  if (want('admission')) {
    progress(`N: ${options.sizes.admissionCalls} model calls admitted, with limits declared and not`);
    scenarios.admission = await admissionCost(options.sizes);
  }
  if (want('capacity')) {
    progress(
      `O: ${options.sizes.capacityRuns} runs waiting for capacity, ${options.sizes.idleSeconds} s idle`,
    );
    scenarios.capacity = await capacityCost(options.sizes);
  }
  if (want('history')) scenarios.history = await historyGrowth(options.sizes);
  if (want('inflight')) scenarios.inflight = await inFlightGrowth(options.sizes);
  if (want('fanout')) scenarios.fanout = await fanOutCost(options.sizes);
  if (want('replication')) scenarios.replication = await replicationCost(options.sizes);
  return BenchReportSchema.parse({
    schemaVersion: 1,
    startedAt,
    totalSeconds: round((performance.now() - began) / 1000),
    scenariosRequested: options.scenarios,
    ...environment,
    settings: Object.fromEntries(
      Object.entries(options.sizes).map(([key, value]) => [
        key,
        Array.isArray(value) ? value.join(',') : (value as number),
      ]),
    ),
    scenarios,
  });
}
