// A and B (and each point of F): runs of echo steps through the deployed services, timed from the stream.
import type { Deployment } from '../deployment';
import { childPids, cpuByGroup, cpuSpent, pidsNamed } from '../proc-stats';
import { countReporter } from '../progress';
import type { BenchScenarios, ThroughputResult } from '../schema';
import { distribution, round } from '../stats';
import { runTimings, stepDistributions } from '../step-timings';
import { lastRunSeq, readStoredEvents } from '../stream-log';
import { runWorkload } from '../workload';

export interface RunsLoad {
  prefix: string;
  runs: number;
  steps: number;
  inFlight: number;
}

async function measure(deployment: Deployment, load: RunsLoad) {
  const before = await lastRunSeq(deployment.jsm);
  const timeoutMs = 60_000 + load.runs * load.steps * 200;
  const workload = await runWorkload(
    deployment,
    { ...load, timeoutMs },
    countReporter(`${load.prefix} runs ended`, load.runs),
  );
  const events = await readStoredEvents(deployment.js, deployment.jsm, before);
  return { workload, timings: runTimings(events) };
}

/** A: one run at a time. */
export async function stepLatency(
  deployment: Deployment,
  load: Omit<RunsLoad, 'inFlight'>,
): Promise<NonNullable<BenchScenarios['latency']>> {
  const { workload, timings } = await measure(deployment, { ...load, inFlight: 1 });
  return {
    mode: 'processes',
    runs: load.runs,
    steps: load.steps,
    ...stepDistributions(timings),
    runWallMs: distribution(timings.runWall),
    clientRunWallMs: distribution(workload.clientWallMs),
  };
}

/** B: `inFlight` runs at a time; steps per second over the stream time from first request to last end. */
export async function throughput(
  deployment: Deployment,
  load: RunsLoad,
  replicas: { gateways: number; planners: number },
): Promise<ThroughputResult> {
  // Where the machine's CPU goes per step: each kind of service, the broker, the database server.
  const groups: Record<string, number[]> = {
    'nats-server': childPids('nats-server'),
    postgres: pidsNamed('postgres'),
    bench: [process.pid],
  };
  for (const service of deployment.services) {
    const kind = service.label.replace(/-\d+$/, '');
    (groups[kind] ??= []).push(service.proc.pid);
  }
  const cpuBefore = cpuByGroup(groups);
  const { timings } = await measure(deployment, load);
  const cpu = cpuSpent(cpuBefore, cpuByGroup(groups));
  const steps = Math.max(1, timings.completedSteps);
  const cpuMsPerStep = Object.fromEntries(
    Object.keys(groups).map((name) => [name, round(((cpu[name] ?? 0) * 1000) / steps)]),
  );
  const elapsedMs = Math.max(0, timings.lastEnded - timings.firstRequested);
  return {
    cpuMsPerStep,
    mode: 'processes',
    runs: load.runs,
    steps: load.steps,
    inFlight: load.inFlight,
    ...replicas,
    completedSteps: timings.completedSteps,
    elapsedMs: round(elapsedMs),
    stepsPerSecond: elapsedMs > 0 ? round((timings.completedSteps * 1000) / elapsedMs) : 0,
    runsFailed: timings.runsFailed,
    ...stepDistributions(timings),
  };
}
