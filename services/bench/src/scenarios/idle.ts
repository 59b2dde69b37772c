// D: a deployment holding many suspended runs, doing nothing: what each process costs while it waits.
import { setTimeout as sleep } from 'node:timers/promises';
import { openDeployment, startServices } from '../deployment';
import { publishEvents, suspendedRunLog } from '../log-builder';
import { childPids, sampleProcess } from '../proc-stats';
import { countReporter, progress } from '../progress';
import type { BenchScenarios } from '../schema';
import { round } from '../stats';
import { lastRunSeq } from '../stream-log';
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
  const watched = [
    ...deployment.services.map((s) => ({ name: s.label, pid: s.proc.pid })),
    ...childPids('nats-server').map((pid) => ({ name: 'nats-server', pid })),
  ];
  const start = watched.map((w) => sampleProcess(w.pid));
  progress(`idle for ${sizes.idleSeconds} s with ${sizes.idleRuns} suspended runs`);
  await sleep(sizes.idleSeconds * 1000);
  const end = watched.map((w) => sampleProcess(w.pid));
  return {
    mode: 'processes',
    suspendedRuns: sizes.idleRuns,
    windowSeconds: sizes.idleSeconds,
    processes: watched.map((w, i) => {
      const cpuSeconds = round(Math.max(0, (end[i]?.cpuSeconds ?? 0) - (start[i]?.cpuSeconds ?? 0)));
      return {
        ...w,
        rssStartMiB: start[i]?.rssMiB ?? 0,
        rssEndMiB: end[i]?.rssMiB ?? 0,
        cpuSeconds,
        cpuShare: round(cpuSeconds / sizes.idleSeconds),
      };
    }),
  };
}
