// A and B, each point of F, P, Q and S, and R's runs: runs through the deployed services, timed from the stream.
import type { SubmitRunInput } from '@dura/client';
import type { Deployment } from '../deployment';
import { localPostmaster, openCpuWindow, type CpuGroup, type CpuWindowResult } from '../cpu-window';
import { childPids } from '../proc-stats';
import { countReporter } from '../progress';
import type { BenchScenarios, CpuDetail, ThroughputResult } from '../schema';
import { distribution, round } from '../stats';
import { runTimings, stepDistributions, type RunTimings } from '../step-timings';
import { lastRunSeq, readStoredEvents } from '../stream-log';
import { runWorkload } from '../workload';
import { waitForCheckpoint } from './projector';

export interface RunsLoad {
  prefix: string;
  runs: number;
  /** Steps a run takes, its child runs' included: the length of its default echo plan, and its timeout's scale. */
  steps: number;
  inFlight: number;
  /** What each run is, by its id; by default `steps` echo steps. */
  request?: (runId: string) => SubmitRunInput;
}

/**
 * The process groups a step costs: each kind of service (every replica's process tree), the broker, the
 * Postgres server this deployment's database lives on (the postmaster's whole tree, when it runs on this
 * machine), and the bench driver itself (its own process only: its children are the groups above).
 */
async function cpuGroups(deployment: Deployment) {
  const groups: CpuGroup[] = [
    { name: 'nats-server', roots: childPids('nats-server') },
    { name: 'bench', roots: [process.pid], scope: 'self' },
  ];
  for (const service of deployment.services) {
    const kind = service.label.replace(/-\d+$/, '');
    const group = groups.find((g) => g.name === kind);
    if (group) group.roots.push(service.proc.pid);
    else groups.push({ name: kind, roots: [service.proc.pid] });
  }
  const [backend] = await deployment.sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const postmaster = backend ? localPostmaster(backend.pid, deployment.db.name) : undefined;
  return { groups, postgres: postmaster ? { postmaster, database: deployment.db.name } : undefined };
}

/** CPU ms per step by group, and how each group's figure was arrived at. */
function cpuPerStep(
  window: CpuWindowResult,
  steps: number,
): { cpuMsPerStep: Record<string, number>; cpu: CpuDetail } {
  const perStep = (seconds: number) => round((seconds * 1000) / Math.max(1, steps));
  const cpuMsPerStep = Object.fromEntries(
    Object.entries(window.groups).map(([name, g]) => [name, perStep(g.cpuSeconds)]),
  );
  const processes = Object.fromEntries(
    Object.entries(window.groups).map(([name, g]) => [
      name,
      {
        atStart: g.processesAtStart,
        atEnd: g.processesAtEnd,
        seen: g.processesSeen,
        startedWithin: g.startedWithin,
        endedWithin: g.endedWithin,
        reapedMsPerStep: perStep(g.reapedCpuSeconds),
      },
    ]),
  );
  const pg = window.postgres;
  return {
    cpuMsPerStep,
    cpu: {
      method: CPU_METHOD,
      pollMs: window.pollMs,
      polls: window.polls,
      processes,
      postgres: pg
        ? {
            measured: true,
            postmasterPid: pg.postmaster,
            serverMsPerStep: perStep(pg.serverCpuSeconds),
            otherDatabasesMsPerStep: perStep(pg.otherDatabasesCpuSeconds),
            otherDatabaseBackends: pg.otherDatabaseBackends,
          }
        : { measured: false },
    },
  };
}

const CPU_METHOD =
  'per process tree from /proc over the window from the first submit to the projector folding the last event: ' +
  'Σ(utime+stime+cutime+cstime) over each tree at the end − the same at the start, so processes that start, ' +
  'end, or start and end within the window count (ended ones through their parent’s reaped-children times); ' +
  'postgres is the postmaster’s whole tree less what backends of other databases were seen to spend';

/**
 * Drives `load` through the deployment within one CPU window, which closes once the projector has folded the
 * last event; returns the stored events of the window (child runs' included) and their timings.
 */
export async function measureRuns(deployment: Deployment, load: RunsLoad) {
  const before = await lastRunSeq(deployment.jsm);
  const timeoutMs = 60_000 + load.runs * load.steps * 200;
  const { groups, postgres } = await cpuGroups(deployment);
  const window = openCpuWindow(groups, postgres);
  let cpuWindow: CpuWindowResult;
  let workload: Awaited<ReturnType<typeof runWorkload>>;
  try {
    workload = await runWorkload(
      deployment,
      { ...load, timeoutMs },
      countReporter(`${load.prefix} runs ended`, load.runs),
    );
    // The projector's share of these steps ends when it has folded their last event, after the runs ended.
    if (deployment.services.some((s) => s.label.startsWith('projector-')))
      await waitForCheckpoint(deployment, await lastRunSeq(deployment.jsm), timeoutMs);
  } finally {
    cpuWindow = window.close();
  }
  const events = await readStoredEvents(deployment.js, deployment.jsm, before);
  const timings = runTimings(events);
  return { workload, events, timings, ...cpuPerStep(cpuWindow, timings.completedSteps) };
}

/** A: one run at a time. */
export async function stepLatency(
  deployment: Deployment,
  load: Omit<RunsLoad, 'inFlight'>,
): Promise<NonNullable<BenchScenarios['latency']>> {
  const { workload, timings, cpuMsPerStep, cpu } = await measureRuns(deployment, { ...load, inFlight: 1 });
  return {
    mode: 'processes',
    cpuMsPerStep,
    cpu,
    runs: load.runs,
    steps: load.steps,
    ...stepDistributions(timings),
    runWallMs: distribution(timings.runWall),
    clientRunWallMs: distribution(workload.clientWallMs),
  };
}

type Replicas = { gateways: number; planners: number; workers?: number };

/**
 * B's figures of a measurement: steps per second over the stream time from first request to last end of the
 * runs `timings` covers, their step timings, and the CPU per step `measureRuns` counted.
 */
export function throughputOf(
  load: RunsLoad,
  replicas: Replicas,
  timings: RunTimings,
  { cpuMsPerStep, cpu }: { cpuMsPerStep: Record<string, number>; cpu: CpuDetail },
): ThroughputResult {
  const elapsedMs = Math.max(0, timings.lastEnded - timings.firstRequested);
  return {
    cpuMsPerStep,
    cpu,
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

/** B: `inFlight` runs at a time. */
export async function throughput(
  deployment: Deployment,
  load: RunsLoad,
  replicas: Replicas,
): Promise<ThroughputResult> {
  const measured = await measureRuns(deployment, load);
  return throughputOf(load, replicas, measured.timings, measured);
}
