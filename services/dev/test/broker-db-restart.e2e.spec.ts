// Crash point 7 (DESIGN): the NATS server itself, and Postgres, restarted mid-run. Three services as
// processes over this spec's own nats-server and its own Postgres server; the services are never restarted:
// each must ride out the outage on its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from './soak/cluster';
import { isKnownDriverCrash } from './soak/supervisor';
import { explain, verifyRuns } from './soak/verify';
import { chargePlan, submitRun, waitForRunsToEnd } from './soak/workload';

const RUNS = 6;
const STEPS = 6;
const DELAY_MS = 300;
let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ planners: 1, gateways: 1 });
}, 180_000);

afterAll(async () => {
  await cluster?.close();
});

/** Submits RUNS runs and resolves once each has at least one charge in flight or done. */
async function submitMidFlight(prefix: string): Promise<string[]> {
  const requests = Array.from({ length: RUNS }, (_, i) => chargePlan(`${prefix}-${i + 1}`, STEPS, DELAY_MS));
  await Promise.all(requests.map((request) => submitRun(cluster, request)));
  const ids = requests.map((request) => request.runId);
  const deadline = Date.now() + 30_000;
  while (!ids.every((id) => cluster.witness.keys().some((key) => key.startsWith(`${id}:`)))) {
    if (Date.now() > deadline) throw new Error('the runs did not start charging within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return ids;
}

/**
 * `tolerateDriverCrash`: a service whose transaction was open when Postgres died may be taken down by the
 * postgres.js bug described at `isKnownDriverCrash`; its slot restarts it as an orchestrator would. Any other
 * exit fails the test.
 */
async function expectAllRecovered(ids: string[], tolerateDriverCrash = false): Promise<void> {
  const open = await waitForRunsToEnd(cluster, ids, 90_000);
  const verdict = await verifyRuns(cluster, ids);
  const tails = cluster.slots.map((slot) => slot.outputTail()).join('\n');
  expect(open, explain(verdict, tails)).toEqual([]);
  expect(verdict.completed, explain(verdict, tails)).toBe(RUNS);
  expect(verdict.steps).toBe(RUNS * STEPS);
  expect(verdict.duplicates, explain(verdict, tails)).toBe(0);
  expect(verdict.problems, explain(verdict, tails)).toEqual([]);
  expect(verdict.projectionMismatches).toBe(0);
  // Riding out the outage means no service process ended or gave up a loop while staying alive.
  const tolerated = cluster.slots.flatMap((slot) => slot.exits()).filter(isKnownDriverCrash).length;
  if (tolerated > 0)
    console.warn(`${tolerated} service process(es) hit the known postgres.js crash and were restarted`);
  for (const slot of cluster.slots) {
    const exits = slot.exits().filter((exit) => !(tolerateDriverCrash && isKnownDriverCrash(exit)));
    expect(exits, `${slot.label} exited:\n${slot.outputTail()}`).toEqual([]);
    expect(slot.current()?.output() ?? '').not.toMatch(/consumer loop ended|projection loop ended/);
  }
}

describe('crash point 7: the infrastructure restarted mid-run', () => {
  it('the nats-server killed and restarted: every run completes, one effect per key, projection = fold', async () => {
    const ids = await submitMidFlight('nats-restart');
    await cluster.restartNats(1_000);
    await expectAllRecovered(ids);
  }, 180_000);

  it('Postgres killed and restarted: every run completes, one effect per key, projection = fold', async () => {
    const ids = await submitMidFlight('pg-restart');
    await cluster.restartPostgres(1_000);
    await expectAllRecovered(ids, true);
  }, 180_000);
});
