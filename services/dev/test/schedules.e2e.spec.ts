// Schedules on real planner processes: each tick starts exactly one run across replicas, also when one is
// SIGKILLed, and after every replica was down each catch-up policy does what it says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuraClient, type DuraClient } from '@dura/client';
import { STREAMS, type ScheduleRecord } from '@dura/contracts';
import { useTestInfra, type ManagedProcess } from '@dura/testing';
import { eventually, openSystem, startService, type SystemHandles } from './system';

const infra = useTestInfra();
let system: SystemHandles;
let client: DuraClient;
let planners: ManagedProcess[] = [];

// A short ack wait: a request taken by a killed planner is redelivered to the survivor within seconds.
const plannerEnv = () => ({ ...system.env, PLANNER_ACK_WAIT_MS: '5000' });
const emptyRun = { v: 1 as const, agent: { kind: 'scripted' as const, steps: [] } };
/** With DURA_TEST_VERBOSE=1: the figures behind the assertions. */
const report = (line: string) => {
  if (process.env['DURA_TEST_VERBOSE'] === '1') process.stderr.write(`[schedules] ${line}\n`);
};

beforeAll(async () => {
  system = await openSystem(infra().nats.url, infra().db.url);
  client = createDuraClient(system);
  // The first planner dies (SIGKILL) right after its 6th decision is written, before that tick's run is
  // published: the other must publish it, and tick on alone.
  planners = await Promise.all([
    startService('planner', { ...plannerEnv(), DURA_FAILPOINT: 'planner.schedule-after-decide:6' }),
    startService('planner', plannerEnv()),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(planners.map((p) => p.kill('SIGTERM')));
  await system?.close();
});

/** Every run id in the log, with how many events it has. */
async function runsInLog(prefix: string): Promise<Map<string, number>> {
  const info = await system.jsm.streams.info(STREAMS.runs, { subjects_filter: 'dura.run.*' });
  const out = new Map<string, number>();
  for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
    const runId = subject.slice('dura.run.'.length);
    if (runId.startsWith(prefix)) out.set(runId, count);
  }
  return out;
}

const started = (record: ScheduleRecord) =>
  record.history.filter((h) => h.runId !== '' && h.action !== 'skipped' && h.action !== 'buffered');

/** Tick seconds of the schedule's runs found in the log, sorted. */
async function tickSecondsInLog(id: string): Promise<number[]> {
  const runs = await runsInLog(`sch-${id}-`);
  return [...runs.keys()].map((runId) => Number(runId.slice(`sch-${id}-`.length))).sort((a, b) => a - b);
}

/** Missing seconds between the first and last tick. */
function gaps(ticks: number[]): number[] {
  const missing: number[] = [];
  for (let i = 1; i < ticks.length; i += 1)
    for (let t = (ticks[i - 1] ?? 0) + 1; t < (ticks[i] ?? 0); t += 1) missing.push(t);
  return missing;
}

/** Each run of the schedule has exactly one run_requested and reached run_completed. */
async function expectOneCompletedRunPerTick(id: string): Promise<void> {
  const ids = [...(await runsInLog(`sch-${id}-`)).keys()];
  await eventually(
    async () => {
      for (const runId of ids) {
        const types = (await client.readEvents(runId)).map((e) => e.type);
        if (!types.includes('run_completed')) return undefined;
        expect(types.filter((t) => t === 'run_requested')).toHaveLength(1);
      }
      return true;
    },
    `every run of schedule ${id} completed`,
    60_000,
  );
}

async function waitForRuns(id: string, count: number, timeoutMs = 90_000): Promise<void> {
  await eventually(
    async () => ((await tickSecondsInLog(id)).length >= count ? true : undefined),
    `${count} runs of schedule ${id}`,
    timeoutMs,
  );
}

/** Pauses the schedule and waits until what it decided is published: the record has nothing pending. */
async function settle(id: string): Promise<ScheduleRecord> {
  await client.schedules.pause(id);
  return eventually(async () => {
    const record = await client.schedules.get(id);
    return record.pending.start.length === 0 ? record : undefined;
  }, `schedule ${id} settled`);
}

describe('a schedule firing every second on two planners', () => {
  it('starts each tick run exactly once for 30 s, also after one planner is SIGKILLed mid-way', async () => {
    await client.schedules.create({
      id: 'every_second',
      tenant: 'acme',
      everyMs: 1000,
      request: emptyRun,
      overlap: 'allow_all',
      catchUp: { policy: 'all', windowMs: 60_000, graceMs: 5000 },
    });
    const killed = await Promise.race([
      planners[0]?.exited,
      new Promise((resolve) => setTimeout(resolve, 90_000, 'the failpoint was not reached')),
    ]);
    expect(killed).toMatchObject({ signal: 'SIGKILL' });
    const atKill = (await tickSecondsInLog('every_second')).length;
    planners = planners.slice(1);
    await waitForRuns('every_second', Math.max(31, atKill + 15));
    const record = await settle('every_second');

    const ticks = await tickSecondsInLog('every_second');
    report(
      `every_second: SIGKILL at ${atKill} runs, ${ticks.length} runs, ticks ${ticks[0]}..${ticks.at(-1)}, gaps ${gaps(ticks).length}`,
    );
    expect(ticks.length).toBeGreaterThanOrEqual(31);
    expect(gaps(ticks)).toEqual([]);
    // The scheduler's own account agrees with the log: one started tick per run, none twice.
    const decided = started(record).map((h) => h.runId);
    expect(new Set(decided).size).toBe(decided.length);
    expect(new Set(decided)).toEqual(new Set((await runsInLog('sch-every_second-')).keys()));
    await expectOneCompletedRunPerTick('every_second');
    const listed = await client.schedules.get('every_second');
    expect(listed.paused).toBe(true);
  });
});

describe('after 10 s with every planner down', () => {
  const graceMs = 2000;
  const policies = ['skip', 'last', 'all'] as const;
  let records: Record<(typeof policies)[number], ScheduleRecord>;

  beforeAll(async () => {
    for (const policy of policies)
      await client.schedules.create({
        id: `catch_${policy}`,
        tenant: 'acme',
        everyMs: 1000,
        request: emptyRun,
        overlap: 'allow_all',
        catchUp: { policy, windowMs: 60_000, graceMs },
      });
    for (const policy of policies) await waitForRuns(`catch_${policy}`, 3);
    await Promise.all(planners.map((p) => p.kill('SIGKILL')));
    const downAt = Date.now();
    // The scenario is the passage of time with nothing running: wait it out, then start one planner.
    await eventually(
      () => Promise.resolve(Date.now() - downAt >= 10_000 ? true : undefined),
      '10 s of downtime',
      30_000,
    );
    const before = Object.fromEntries(
      await Promise.all(
        policies.map(async (p) => [p, (await tickSecondsInLog(`catch_${p}`)).length] as const),
      ),
    );
    planners = [await startService('planner', plannerEnv())];
    for (const policy of policies) await waitForRuns(`catch_${policy}`, (before[policy] ?? 0) + 4);
    records = {
      skip: await settle('catch_skip'),
      last: await settle('catch_last'),
      all: await settle('catch_all'),
    };
  }, 240_000);

  const missedEntry = (record: ScheduleRecord) => record.history.find((h) => h.action === 'missed');

  it('skip: the missed ticks never run; the next run is on time', async () => {
    const ticks = await tickSecondsInLog('catch_skip');
    const missing = gaps(ticks);
    const missed = missedEntry(records.skip);
    report(
      `skip: ${ticks.length} runs, ${missing.length} ticks not run, missed entry ${JSON.stringify(missed)}`,
    );
    expect(missed?.count).toBeGreaterThanOrEqual(8);
    expect(missing).toHaveLength(missed?.count ?? -1);
    const firstAfter = ticks.find((t) => t > (missing.at(-1) ?? 0)) ?? 0;
    expect(firstAfter * 1000).toBeGreaterThanOrEqual((missed?.tick ?? 0) - graceMs);
    await expectOneCompletedRunPerTick('catch_skip');
  });

  it('last: only the most recent missed tick runs, then the ticks on time', async () => {
    const ticks = await tickSecondsInLog('catch_last');
    const missing = gaps(ticks);
    const missed = missedEntry(records.last);
    report(
      `last: ${ticks.length} runs, ${missing.length} ticks not run, missed entry ${JSON.stringify(missed)}`,
    );
    expect(missed?.count).toBeGreaterThanOrEqual(7);
    expect(missing).toHaveLength(missed?.count ?? -1);
    const [caughtUp = 0, onTime = 0] = ticks.filter((t) => t > (missing.at(-1) ?? 0));
    const passAt = missed?.tick ?? 0;
    expect(caughtUp * 1000).toBeLessThan(passAt - graceMs);
    expect(onTime * 1000).toBeGreaterThanOrEqual(passAt - graceMs);
    await expectOneCompletedRunPerTick('catch_last');
  });

  it('all: every missed tick within the window runs, none twice', async () => {
    const ticks = await tickSecondsInLog('catch_all');
    report(`all: ${ticks.length} runs, ticks ${ticks[0]}..${ticks.at(-1)}, gaps ${gaps(ticks).length}`);
    expect(gaps(ticks)).toEqual([]);
    expect(missedEntry(records.all)).toBeUndefined();
    const decided = started(records.all).map((h) => h.runId);
    expect(new Set(decided).size).toBe(decided.length);
    await expectOneCompletedRunPerTick('catch_all');
  });
});
