// E: a cold projector over a stream that already holds N events: how fast it folds them into Postgres.
import { setTimeout as sleep } from 'node:timers/promises';
import { openDeployment, type Deployment } from '../deployment';
import { eventsForSteps, finishedRunLog, publishEvents } from '../log-builder';
import { countReporter, progress } from '../progress';
import type { BenchScenarios } from '../schema';
import { round } from '../stats';
import { lastRunSeq } from '../stream-log';

const STEPS_PER_RUN = 10;
const EVENTS_PER_RUN = eventsForSteps(STEPS_PER_RUN) + 2;

/** Resolves once the projector's checkpoint (any row) reaches `seq`; polls every 100 ms. */
export async function waitForCheckpoint(
  deployment: Deployment,
  seq: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let lastReport = Date.now();
  for (;;) {
    const rows = await deployment.sql<{ last_seq: string }[]>`
      select coalesce(max(last_seq), 0) as last_seq from projector_checkpoints`.catch(() => [
      { last_seq: '0' },
    ]);
    last = Number(rows[0]?.last_seq ?? 0);
    if (last >= seq) return;
    if (Date.now() > deadline)
      throw new Error(`projector checkpoint at ${last}, wanted ${seq}, after ${timeoutMs} ms`);
    if (Date.now() - lastReport > 10_000) {
      progress(`projector checkpoint ${last}/${seq}`);
      lastReport = Date.now();
    }
    await sleep(100);
  }
}

function* finishedRuns(runs: number) {
  for (let i = 1; i <= runs; i += 1)
    yield* finishedRunLog(`proj-${String(i).padStart(7, '0')}`, STEPS_PER_RUN).events;
}

export async function projectorCatchUp(sizes: {
  projectorEvents: number;
}): Promise<NonNullable<BenchScenarios['projector']>> {
  await using deployment = await openDeployment('projector');
  // The streams exist before the projector does: a gateway creates them, then leaves.
  const creator = await deployment.start('tool-gateway');
  await creator.proc.kill('SIGTERM');
  deployment.services.length = 0;
  const runs = Math.max(1, Math.ceil(sizes.projectorEvents / EVENTS_PER_RUN));
  const began = performance.now();
  const events = await publishEvents(
    deployment.js,
    finishedRuns(runs),
    countReporter('published events', runs * EVENTS_PER_RUN, 100_000),
  );
  const publishMs = performance.now() - began;
  const target = await lastRunSeq(deployment.jsm);
  const spawned = performance.now();
  const projector = await deployment.start('projector');
  await waitForCheckpoint(deployment, target, 1_800_000);
  const catchUpMs = performance.now() - spawned;
  return {
    mode: 'processes',
    events,
    note:
      `runs of ${EVENTS_PER_RUN} events (${STEPS_PER_RUN} echo steps), published before the projector starts; ` +
      'catchUpMs counts from the projector process spawn (startupMs of it is node/tsx boot and migrations)',
    publishEventsPerSecond: round((events * 1000) / publishMs),
    catchUpMs: round(catchUpMs),
    eventsPerSecond: round((events * 1000) / catchUpMs),
    startupMs: round(projector.startupMs),
  };
}
