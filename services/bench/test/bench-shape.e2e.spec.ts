// A tiny run of every scenario: the report must keep its shape (timings are not checked, only present).
// The scenarios run in three groups, one test each: a loaded CI machine took over 300 s for all of them in
// one (72 s on an idle one), so each group has a test's time of its own.
import { describe, expect, it } from 'vitest';
import { BenchReportSchema, SCENARIOS, TINY_SIZES, runBench, type ScenarioName } from '../src/index';

/** The scenarios from letter `first` to letter `last`, in the order of their letters (A is the first). */
const lettered = (first: string, last: string): ScenarioName[] =>
  SCENARIOS.slice(first.charCodeAt(0) - 'A'.charCodeAt(0), last.charCodeAt(0) - 'A'.charCodeAt(0) + 1);
const SERVICES = lettered('A', 'H');
const AGENTS = lettered('I', 'O');
const GROWTH = lettered('P', 'S');

/** A tiny run of `scenarios`, parsed by the report's schema: it holds those scenarios and no other. */
async function tinyReport(scenarios: ScenarioName[]) {
  const report = await runBench({ scenarios, sizes: TINY_SIZES, out: undefined });
  const parsed = BenchReportSchema.parse(JSON.parse(JSON.stringify(report)));
  expect(Object.keys(parsed.scenarios).sort()).toEqual([...scenarios].sort());
  return parsed;
}

describe('npm run bench', () => {
  it('groups every scenario once (a scenario after S needs a group of its own)', () => {
    expect([...SERVICES, ...AGENTS, ...GROWTH].sort()).toEqual([...SCENARIOS].sort());
  });

  it('writes a report of the stable shape for a tiny run of the services scenarios (A–H)', async () => {
    const parsed = await tinyReport(SERVICES);
    expect(parsed.durability.postgresSynchronousCommit).not.toBe('');
    expect(parsed.scenarios.latency?.intentToObservationMs.count).toBe(
      TINY_SIZES.latencyRuns * TINY_SIZES.latencySteps,
    );
    expect(parsed.scenarios.throughput?.runsFailed).toBe(0);
    expect(parsed.scenarios.resume?.cases).toHaveLength(TINY_SIZES.resumeEvents.length * 2);
    expect(parsed.scenarios.idle?.processes.map((p) => p.name)).toEqual(
      expect.arrayContaining(['planner-1', 'tool-gateway-1', 'projector-1', 'nats-server']),
    );
    expect(parsed.scenarios.scaling?.points.map((p) => p.gateways)).toEqual(TINY_SIZES.gateways);
    // Each point ran on the gateways it reports, its deployment fresh or the previous point's with one added.
    expect(parsed.scenarios.scaling?.points.map((p) => p.cpu.processes['tool-gateway']?.atStart)).toEqual(
      TINY_SIZES.gateways,
    );
    expect(parsed.scenarios.floors?.jetstreamPublishMs.count).toBe(TINY_SIZES.floorSamples);
    expect(parsed.scenarios.floors?.postgresCommitMs.count).toBe(TINY_SIZES.floorSamples);
    for (const cpu of [parsed.scenarios.latency?.cpuMsPerStep, parsed.scenarios.throughput?.cpuMsPerStep])
      expect(Object.keys(cpu ?? {}).sort()).toEqual(
        ['bench', 'nats-server', 'planner', 'postgres', 'projector', 'tool-gateway'].sort(),
      );
    // The local Postgres server is counted as its postmaster's tree, and its backends were seen.
    expect(parsed.scenarios.throughput?.cpu.postgres.measured).toBe(true);
    expect(parsed.scenarios.throughput?.cpu.processes['postgres']?.seen).toBeGreaterThan(1);
    expect(parsed.durability.jetstreamStreams['DURA_RUNS']?.storage).toBe('file');
    expect(parsed.machine.loadAverageAtStart).toHaveLength(3);
    expect(parsed.scenarios.list?.runs).toBe(TINY_SIZES.listRuns);
    expect(parsed.scenarios.list?.queries.map((q) => q.latencyMs.count)).toEqual(
      parsed.scenarios.list?.queries.map(() => TINY_SIZES.listSamples),
    );
    expect(parsed.scenarios.list?.queries.find((q) => q.shape === 'first page')?.rows).toBe(50);
  });

  it('writes a report of the stable shape for a tiny run of the agents scenarios (I–O)', async () => {
    const parsed = await tinyReport(AGENTS);
    const waits = parsed.scenarios.waits;
    const timerRuns = TINY_SIZES.waitRuns / 2;
    expect(waits?.waitingEnd).toEqual({ signal: TINY_SIZES.waitRuns - timerRuns, timer: timerRuns });
    expect(waits?.timers).toEqual({ rows: timerRuns, unfiredRows: timerRuns, gatewayPending: timerRuns });
    expect(waits?.processes.map((p) => p.name)).toEqual(
      expect.arrayContaining(['planner-1', 'tool-gateway-1', 'projector-1', 'nats-server']),
    );
    expect(waits?.resume.completed).toBe(TINY_SIZES.waitResumes);
    expect(waits?.resume.signalToCompletedMs.count).toBe(TINY_SIZES.waitResumes);
    const capacity = parsed.scenarios.capacity;
    // Every run is accounted for; under 1 request a minute, the runs but a few wait for capacity.
    const counted = capacity?.waitingEnd;
    expect((counted?.capacity ?? 0) + (counted?.completed ?? 0) + (counted?.other ?? 0)).toBe(
      TINY_SIZES.capacityRuns,
    );
    expect(capacity?.settled).toBe(true);
    expect(capacity?.waitingStart.capacity).toBeGreaterThanOrEqual(TINY_SIZES.capacityRuns - 2);
    const code = parsed.scenarios.code;
    // Every decision but the first resumed the kept execution: the code ran from its start once.
    expect(code?.continuations).toEqual({ warm: TINY_SIZES.codeSteps, cold: 1 });
    expect(code?.cachedStepMs.count).toBe(TINY_SIZES.codeSteps + 1);
    expect(code?.uncachedStepMs.count).toBe(Math.ceil((TINY_SIZES.codeSteps + 1) / 10));
    expect(code?.coldResumeMs.count).toBe(TINY_SIZES.codeColdRepeats);
    expect(code?.driver.stepDriveMs.count).toBe(TINY_SIZES.codeSteps);
    expect(code?.services.stepCycleMs.count).toBe(TINY_SIZES.codeSteps);
    expect(parsed.scenarios.cli?.commands.map((c) => c.name)).toEqual([
      'dura --help',
      'dura ls (API unreachable)',
      'npx dura --help',
    ]);
    for (const c of parsed.scenarios.cli?.commands ?? []) expect(c.wallMs.count).toBe(TINY_SIZES.cliRuns);
    expect(parsed.scenarios.tokens?.firstTokenMs.count).toBe(TINY_SIZES.tokenRuns);
    expect(parsed.scenarios.aisdk?.plainMs.count).toBe(TINY_SIZES.aisdkSamples);
    expect(parsed.scenarios.aisdk?.durableStepMs.count).toBe(TINY_SIZES.aisdkSamples);
  });

  it('writes a report of the stable shape for a tiny run of the growth scenarios (P–S)', async () => {
    const parsed = await tinyReport(GROWTH);
    // The growth scenarios: one point per size asked for, every step of every run completed.
    const { history, inflight, fanout, replication } = parsed.scenarios;
    expect(history?.points.map((p) => p.steps)).toEqual(TINY_SIZES.historySteps);
    expect(inflight?.points.map((p) => p.inFlight)).toEqual(TINY_SIZES.inFlightPoints);
    for (const p of [...(history?.points ?? []), ...(inflight?.points ?? []), ...(replication?.points ?? [])])
      expect([p.completedSteps, p.runsFailed]).toEqual([p.runs * p.steps, 0]);
    const childRuns = TINY_SIZES.fanoutParents * TINY_SIZES.fanoutChildren;
    expect(fanout?.completedSteps).toBe(childRuns * TINY_SIZES.fanoutSteps);
    expect(fanout?.runsFailed).toBe(0);
    expect(fanout?.parentWallMs.count).toBe(TINY_SIZES.fanoutParents);
    expect(fanout?.childWallMs.count).toBe(childRuns);
    expect(fanout?.direct.completedSteps).toBe(childRuns * TINY_SIZES.fanoutSteps);
    expect(replication?.points.map((p) => [p.natsNodes, p.streamReplicas])).toEqual([
      [1, 1],
      [3, 3],
    ]);
  });
});
