// D: a deployment holding many suspended runs, doing nothing: what each process costs while it waits.
import { openDeployment, startServices } from '../deployment';
import { publishEvents, suspendedRunLog } from '../log-builder';
import { countReporter, progress } from '../progress';
import type { BenchScenarios } from '../schema';
import { lastRunSeq } from '../stream-log';
import { measureProcesses } from './idle-window';
import { waitForCheckpoint } from './projector';

function* suspendedEvents(runs: number) {
  for (let i = 1; i <= runs; i += 1) yield* suspendedRunLog(`idle-${String(i).padStart(6, '0')}`).events;
}

export async function idleCost(sizes: {
  idleRuns: number;
  idleSeconds: number;
}): Promise<NonNullable<BenchScenarios['idle']>> {
  await using deployment = await openDeployment('idle');
  await startServices(deployment, { gateways: 1, planners: 1 });
  const total = sizes.idleRuns * 3;
  await publishEvents(
    deployment.js,
    suspendedEvents(sizes.idleRuns),
    countReporter('suspended-run events', total, 10_000),
  );
  // Idle means after the projector has folded them in.
  await waitForCheckpoint(deployment, await lastRunSeq(deployment.jsm), 600_000);
  progress(`idle for ${sizes.idleSeconds} s with ${sizes.idleRuns} suspended runs`);
  return {
    mode: 'processes',
    suspendedRuns: sizes.idleRuns,
    windowSeconds: sizes.idleSeconds,
    processes: await measureProcesses(deployment, sizes.idleSeconds),
  };
}
