// Issue acceptance: gateways scale from 1 to 3 while 50 runs are in flight; the work spreads across the
// replicas (per-replica counts from each gateway's /metrics) and no run stalls.
import { describe, expect, it } from 'vitest';
import {
  chargePlan,
  expectRunIntact,
  followRun,
  scrape,
  stallReport,
  useDuraCluster,
} from './cluster-support';
import { eventually } from './system';

const RUNS = 50;
const STEPS = 4;
const CALLS = RUNS * STEPS;
const RUN_TIMEOUT_MS = 60_000;
/** A test's budget: the runs' time (with the hold) and the checks of 50 logs after it, on a loaded machine. */
const TEST_TIMEOUT_MS = 240_000;

// Four calls at a time per gateway: one replica is the bottleneck, so replicas added later find work queued.
// (With the default 32, one gateway would take every call of 50 runs at once.)
const system = useDuraCluster('cluster_scale', {
  planners: 2,
  gateways: 1,
  projectors: 1,
  // The witness holds every answer while the new gateways start (below): calls must outlast that hold.
  // No gateway dies here, so a claim need not be taken over within seconds: a gateway that waited longer than
  // the crash tests' 1 s margin between its claim and the call (seen on a loaded 2-core machine, with three
  // nats-servers beside the services) handed the call back, and it ran again only when its lease of the
  // tool's 60 s ran out, after the runs' 60 s. A margin of 10 s keeps the claim's fence, with room for such
  // a wait.
  env: { GATEWAY_CONCURRENCY: '4', WITNESS_TOOL_TIMEOUT_MS: '60000', GATEWAY_LEASE_MARGIN_MS: '10000' },
});

describe('gateways scaled from 1 to 3 under load on the local cluster', { timeout: TEST_TIMEOUT_MS }, () => {
  it('spreads the calls over every replica, and every run completes', async () => {
    const sys = system();
    const { cluster, witness } = sys;
    const requests = Array.from({ length: RUNS }, (_, i) =>
      chargePlan(
        `scale-${String(i).padStart(2, '0')}`,
        STEPS,
        (step) => 200 + ((i * 7 + step * 3) % 4) * 100,
      ),
    );
    const began = performance.now();
    // The runs have RUN_TIMEOUT_MS to complete, plus the time the witness holds every answer (below): that
    // hold lasts as long as two gateways take to start, which a loaded machine stretches.
    let heldMs = 0;
    const follows = new Map<string, ReturnType<typeof followRun>>();
    for (const request of requests) {
      await sys.client.submitRun(request);
      follows.set(
        request.runId,
        followRun(sys, request.runId, RUN_TIMEOUT_MS, 500, () => heldMs),
      );
    }
    await eventually(
      () => Promise.resolve(witness.totals().effects >= 8 ? true : undefined),
      'the first gateway to be charging',
      30_000,
    );
    // The first gateway's calls wait at the witness while the new replicas start (a process start-up under a
    // loaded machine can take longer than one gateway needs to drain the queue): they join a queue that is
    // still full by construction, and the test asserts that they then take a share of it.
    const release = witness.holdAnswers();
    const scaledFrom = performance.now();
    let effectsWhenScaled: number;
    try {
      await Promise.all([cluster.start('tool-gateway'), cluster.start('tool-gateway')]);
      effectsWhenScaled = witness.totals().effects;
    } finally {
      release();
      heldMs = performance.now() - scaledFrom;
    }
    const scaledInMs = Math.round(heldMs);
    expect(effectsWhenScaled, 'the new gateways joined while calls were still queued').toBeLessThan(
      CALLS / 2,
    );

    const runs = await Promise.all([...follows.values()]);
    const allDoneMs = Math.round(performance.now() - began);
    const unfinished = requests.filter((_, i) => runs[i]?.events.at(-1)?.type !== 'run_completed');
    if (unfinished.length > 0)
      expect.fail(
        `runs did not complete:\n${await stallReport(
          sys,
          unfinished.map((r) => r.runId),
        )}`,
      );
    for (const request of requests) await expectRunIntact(sys, request);
    expect(witness.totals()).toMatchObject({ effects: CALLS, keys: CALLS });

    const perReplica: Record<string, number> = {};
    for (const gateway of cluster.of('tool-gateway'))
      perReplica[gateway.label] = (await scrape(gateway.metricsUrl))(
        'dura_tool_call_duration_seconds_count',
        {
          outcome: 'succeeded',
        },
      );
    const counts = Object.values(perReplica);
    expect(counts, 'three gateways report').toHaveLength(3);
    for (const [label, count] of Object.entries(perReplica))
      expect(count, `calls run by ${label}`).toBeGreaterThan(0);
    expect(
      counts.reduce((a, b) => a + b, 0),
      'every call counted once, by the replica that ran it',
    ).toBe(CALLS);
    expect(cluster.unexpectedExits(), 'no replica crashed').toEqual([]);

    const runMs = runs.map((run) => run.ms);
    console.log(
      JSON.stringify({
        runs: RUNS,
        calls: CALLS,
        scaledAfterEffects: effectsWhenScaled,
        newGatewaysReadyInMs: scaledInMs,
        perReplica,
        allDoneMs,
        runMs: { min: Math.min(...runMs), max: Math.max(...runMs) },
        longestGapMs: Math.max(...runs.map((run) => run.longestGapMs)),
      }),
    );
  });

  it('every replica ran as its own least-privilege NATS user, and none was denied anything', () => {
    const { cluster } = system();
    const userOf = { planner: 'planner', 'tool-gateway': 'gateway', projector: 'projector' } as const;
    for (const replica of cluster.replicas) {
      const output = replica.proc.output();
      expect(output, replica.label).toMatch(new RegExp(`nats connected.*user \\\\?"${userOf[replica.kind]}`));
      expect(output, replica.label).not.toMatch(/NATS denied|Permissions Violation/);
    }
  });
});
