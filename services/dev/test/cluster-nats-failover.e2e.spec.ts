// Issue acceptance: on the local cluster (3 NATS nodes, R3 streams, 2 planners, 3 gateways, 1 projector), the
// node leading the run log is SIGKILLed mid-run and brought back: every run completes, no effect is
// duplicated, no event is lost.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { STREAMS } from '@dura/contracts';
import {
  chargePlan,
  expectClusterWhole,
  followRun,
  leaderOf,
  repeatedModelCalls,
  scrape,
  useDuraCluster,
  type WatchedRun,
} from './cluster-support';
import { eventually } from './system';

const RUNS = 16;
const STEPS = 6;
const DOWN_MS = 4_000;
// Submit to completion. A durable consumer whose leader was on the lost node gets no pull requests until its
// clients' 5 s pulls expire and go to the new leader; measured here, runs stand still 10-17 s. On a machine
// busy with other suites the elections themselves take longer, so the bound leaves room for that.
const FOLLOW_TIMEOUT_MS = 110_000;

const system = useDuraCluster('cluster_nats_failover', { planners: 2, gateways: 3, projectors: 1 });

describe('a NATS node lost mid-run on the local cluster', () => {
  it('every run completes, each key charged once, every log whole on every node', async () => {
    const sys = system();
    const { cluster, witness, jsm } = sys;
    const runsInfo = await jsm.streams.info(STREAMS.runs);
    expect(runsInfo.config.num_replicas, 'the run log is replicated to every node').toBe(3);

    const requests = Array.from({ length: RUNS }, (_, i) =>
      chargePlan(`failover-${String(i).padStart(2, '0')}`, STEPS, (step) => 250 + ((i + step) % 3) * 100),
    );
    const watches = new Map<string, Promise<WatchedRun>>();
    for (const request of requests) {
      await sys.client.submitRun(request);
      watches.set(request.runId, followRun(sys, request.runId, FOLLOW_TIMEOUT_MS));
    }

    // Mid-run: about one charge per run made, five more to go for each.
    await eventually(
      () => Promise.resolve(witness.totals().effects >= RUNS ? true : undefined),
      `${RUNS} charges before the kill`,
      30_000,
    );
    const leader = await leaderOf(jsm, STREAMS.runs);
    const victim = cluster.nats.indexOf(leader);
    const effectsAtKill = witness.totals().effects;
    const killedAt = performance.now();
    await cluster.nats.kill(victim, 'SIGKILL');
    await sleep(DOWN_MS);
    const newLeader = await leaderOf(jsm, STREAMS.runs);
    expect(newLeader, 'another node leads the run log').not.toBe(leader);
    const leaderSeenAfterMs = Math.round(performance.now() - killedAt);
    const effectsWhileDown = witness.totals().effects - effectsAtKill;
    await cluster.nats.restart(victim);
    const restartedAfterMs = Math.round(performance.now() - killedAt);

    const runs = await Promise.all(
      requests.map((request) => watches.get(request.runId) as Promise<WatchedRun>),
    );
    const lastDoneMs = Math.round(performance.now() - killedAt);
    await expectClusterWhole(sys, requests, runs, STEPS);

    const runMs = runs.map((run) => run.ms);
    const repeats = repeatedModelCalls(await sys.modelCalls());
    let conflictsLost = 0;
    for (const planner of cluster.of('planner'))
      conflictsLost += (await scrape(planner.metricsUrl))('dura_decision_conflicts_lost_total');
    console.log(
      JSON.stringify({
        killed: leader,
        newLeader,
        leaderSeenAfterMs,
        downMs: DOWN_MS,
        restartedAfterMs,
        lastRunDoneAfterKillMs: lastDoneMs,
        effectsAtKill,
        effectsWhileDown,
        runMs: { min: Math.min(...runMs), max: Math.max(...runMs) },
        longestGapMs: Math.max(...runs.map((run) => run.longestGapMs)),
        repeatedModelCalls: repeats,
        conflictsLost,
        startFailures: cluster.startFailures().length,
        staleReadsRetried: cluster.replicas.reduce(
          (n, replica) => n + (replica.proc.output().match(/log read ended before the event/g)?.length ?? 0),
          0,
        ),
      }),
    );
  }, 180_000);
});
