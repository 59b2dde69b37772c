// The nemesis soak: rounds of runs (scripted charge plans, code agents sleeping on timers, code agents asking a
// model) on two planners, two gateways, a worker and a projector, each round with one nemesis injected while
// its runs are in flight and healed before they are checked. After each round every run must have ended,
// completed, and pass verifyRuns and the log checks. Used by nemesis-short.e2e.spec.ts (in `npm test`) and `npm run soak`.
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDuraClient } from '@dura/client';
import { STREAMS } from '@dura/contracts';
import {
  createClockControl,
  mountLimitedDisk,
  type ClockControl,
  type FakeLlmServer,
  type LimitedDisk,
} from '@dura/testing';
import { startCluster, type Cluster } from './cluster';
import { checkLogs, modelAskProblems, type ModelAsk } from './log-checks';
import { promptsOfThought, startModel } from './nemesis-model';
import {
  CLOCKED,
  DISK_NEMESES,
  INJECT,
  PARTITIONED,
  PREPARE,
  type ModelFaults,
  type NemesisContext,
  type NemesisName,
} from './nemesis';
import { explain, verifyRuns } from './verify';
import { chargePlan, waitForRunsToEnd } from './workload';

const AGENTS = fileURLToPath(new URL('../fixtures/nemesis-agents.ts', import.meta.url));
const SCHEDULE = 'nemesis_tick';

export interface NemesisSoakOptions {
  nemeses: readonly NemesisName[];
  /** Rounds to run (one nemesis each, in turn); with `minutes`, rounds go on until that long has passed. */
  rounds: number;
  minutes?: number;
  /** Per round: scripted charge plans of `steps` steps, sleeping agents, model-asking agents. */
  plans: number;
  steps: number;
  sleepers: number;
  thinkers: number;
  /** How long the witness holds back each answer, so calls are in flight when the nemesis strikes. */
  delayMs: number;
  /** How long a round's runs may take to end after the nemesis healed. */
  settleMs: number;
  /** Size of the tmpfs the nats-server stores JetStream on (the disk nemesis fills it). */
  diskMb: number;
  progress?: (line: string) => void;
}

export interface NemesisFigures {
  rounds: number;
  runs: number;
  completed: number;
  faults: Partial<Record<NemesisName, number>>;
  effects: number;
  keys: number;
  duplicates: number;
  lost: number;
  reexecutions: number;
  modelAsks: number;
  modelAnswersRecorded: number;
  /**
   * Asks of a recorded prompt that arrived after it was recorded: retries of a replica that asked side by side
   * (within 2 s), or, in pause rounds only, a request a paused process decided on before the pause. Their
   * answers are refused at append, never recorded.
   */
  lateModelAsks: number;
  /**
   * Tool requests that reached the payment API after a later attempt of their call had (pause rounds only): a
   * paused gateway's request, sent after the pause although its claim was checked before; charged once by key.
   */
  lateToolRequests: number;
  timersFired: number;
  scheduleRuns: number;
  wallMs: number;
}

export interface NemesisReport {
  ok: boolean;
  figures: NemesisFigures;
  explanation: string;
}

/** Postgres's own disk: room for the cluster and the soak's rows, small enough to fill in a second. */
const PG_DISK_MB = 512;

export const SHORT_NEMESIS: Omit<NemesisSoakOptions, 'nemeses'> = {
  rounds: 1,
  plans: 4,
  steps: 4,
  sleepers: 2,
  thinkers: 2,
  delayMs: 300,
  settleMs: 90_000,
  // DURA_TOKENS alone may hold 512 MiB: JetStream refuses to create it on a smaller store.
  diskMb: 1024,
};

/** Starts the deployment on a fake clock and a small disk, runs the rounds, checks each; tears all down. */
export async function runNemesisSoak(options: NemesisSoakOptions): Promise<NemesisReport> {
  const started = Date.now();
  const lines: string[] = [];
  const say = (line: string) => {
    const stamped = `[nemesis +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`;
    lines.push(stamped);
    options.progress?.(stamped);
  };
  const figures: NemesisFigures = {
    rounds: 0,
    runs: 0,
    completed: 0,
    faults: {},
    effects: 0,
    keys: 0,
    duplicates: 0,
    lost: 0,
    reexecutions: 0,
    modelAsks: 0,
    modelAnswersRecorded: 0,
    lateModelAsks: 0,
    lateToolRequests: 0,
    timersFired: 0,
    scheduleRuns: 0,
    wallMs: 0,
  };
  const modelFaults: ModelFaults = { failNext: 0, lateMs: 0 };
  const asks: ModelAsk[] = [];
  let clock: ClockControl | undefined;
  let disk: LimitedDisk | undefined;
  let pgDisk: LimitedDisk | undefined;
  let model: FakeLlmServer | undefined;
  let cluster: Cluster | undefined;
  try {
    clock = await createClockControl();
    // ext4 images on loop devices, so the stall nemeses can freeze them; Postgres's is the postgres user's.
    // Mounted only for a disk nemesis: the others need no root.
    if (options.nemeses.some((nemesis) => DISK_NEMESES.has(nemesis))) {
      disk = await mountLimitedDisk(options.diskMb, undefined, { stallable: true });
      pgDisk = await mountLimitedDisk(PG_DISK_MB, process.getuid?.() === 0 ? 'postgres' : undefined, {
        stallable: true,
      });
    }
    model = await startModel(modelFaults, asks);
    const clockEnv = clock.env;
    cluster = await startCluster({
      planners: 2,
      gateways: 2,
      workers: 1,
      ...(disk ? { natsStoreDir: disk.dir } : {}),
      ...(pgDisk ? { pgDir: pgDisk.dir } : {}),
      natsLinks: PARTITIONED,
      // Attempts enough for a call to outlast the slow nemesis: a late answer and a burst of six 5xx.
      env: { DURA_AGENTS: AGENTS, NEMESIS_MODEL_URL: model.url, GATEWAY_MAX_ATTEMPTS: '8' },
      // Each replica asks the model with its label for an API key: the model's log says who asked.
      envFor: (label) => ({ NEMESIS_CALLER: label, ...(CLOCKED.has(label) ? clockEnv : {}) }),
    });
    say(`cluster ready: ${cluster.slots.map((slot) => slot.label).join(', ')}`);
    const ctx: NemesisContext = {
      cluster,
      clock,
      ...(disk ? { disk } : {}),
      ...(pgDisk ? { pgDisk } : {}),
      model: modelFaults,
      say,
    };
    for (let round = 0; ; round += 1) {
      const overTime = options.minutes !== undefined && Date.now() - started > options.minutes * 60_000;
      if (round >= options.rounds && (options.minutes === undefined || overTime)) break;
      const nemesis = options.nemeses[round % options.nemeses.length] as NemesisName;
      const failure = await runRound(ctx, nemesis, round, options, figures, asks);
      if (failure)
        return { ok: false, figures: done(figures, started), explanation: [failure, ...lines].join('\n') };
    }
    return { ok: true, figures: done(figures, started), explanation: '' };
  } catch (err) {
    return {
      ok: false,
      figures: done(figures, started),
      explanation: [String((err as Error).stack ?? err), ...lines].join('\n'),
    };
  } finally {
    await clock?.set(0).catch(() => undefined);
    await cluster?.close();
    await model?.close();
    await disk?.close();
    await pgDisk?.close();
    await clock?.close();
  }
}

function done(figures: NemesisFigures, started: number): NemesisFigures {
  return { ...figures, wallMs: Date.now() - started };
}

/** One round: submit, strike while calls are in flight, heal, wait for every run to end, check. */
async function runRound(
  ctx: NemesisContext,
  nemesis: NemesisName,
  round: number,
  options: NemesisSoakOptions,
  figures: NemesisFigures,
  asks: readonly ModelAsk[],
): Promise<string | undefined> {
  const { cluster } = ctx;
  const say = (line: string) => ctx.say(line);
  const client = createDuraClient(cluster);
  const prefix = `${nemesis}-${round}`;
  const runIds: string[] = [];
  const submit = async (runId: string, request: Parameters<typeof client.submitRun>[0]) => {
    await client.submitRun(request);
    runIds.push(runId);
  };
  await PREPARE[nemesis]?.(ctx);
  const effectsBefore = cluster.witness.totals().effects;
  for (let i = 0; i < options.plans; i += 1) {
    const runId = `${prefix}-p${i}`;
    await submit(runId, chargePlan(runId, options.steps, options.delayMs));
  }
  for (let i = 0; i < options.sleepers; i += 1) {
    const runId = `${prefix}-s${i}`;
    await submit(runId, { runId, agent: { kind: 'agent', name: 'nemesis-sleeper' }, input: null });
  }
  for (let i = 0; i < options.thinkers; i += 1) {
    const runId = `${prefix}-t${i}`;
    await submit(runId, { runId, agent: { kind: 'agent', name: 'nemesis-thinker' }, input: null });
  }
  if (nemesis === 'clock')
    await client.schedules.create({
      id: SCHEDULE,
      tenant: 'default',
      everyMs: 2_000,
      request: { v: 1, agent: { kind: 'scripted', steps: [] } },
      overlap: 'allow_all',
      catchUp: { policy: 'skip', windowMs: 60_000, graceMs: 2_000 },
    });
  // Strike once calls are in flight: a few charges made, most still to come.
  for (let i = 0; i < 40 && cluster.witness.totals().effects - effectsBefore < runIds.length; i += 1)
    await sleep(250);
  say(`round ${round}: ${runIds.length} runs in flight, injecting ${nemesis}`);
  const injectedAt = Date.now();
  const faults = await INJECT[nemesis](ctx);
  const healedAt = Date.now();
  figures.faults[nemesis] = (figures.faults[nemesis] ?? 0) + faults;
  if (nemesis === 'clock') {
    await client.schedules.pause(SCHEDULE);
    const scheduled = await scheduleRunIds(cluster);
    figures.scheduleRuns = scheduled.length;
    runIds.push(...scheduled.filter((runId) => !runIds.includes(runId)));
  }
  await cluster.ready(options.settleMs);
  const open = await waitForRunsToEnd(cluster, runIds, options.settleMs);
  say(`round ${round} (${nemesis}) healed: ${runIds.length - open.length}/${runIds.length} runs ended`);

  // A paused gateway may send a request it checked its claim for before the pause; nowhere else is one late.
  const verdict = await verifyRuns(cluster, runIds, { lateRequestsAllowed: nemesis === 'pause' });
  const logs = await checkLogs(cluster, runIds);
  // While the broker's disk stalls, a thought it received is stamped but cannot be read until the disk answers.
  const models = await modelAskProblems(cluster, asks, promptsOfThought, runIds, {
    ...(nemesis === 'stall' ? { unreadable: { from: injectedAt, until: healedAt } } : {}),
  });
  const totals = cluster.witness.totals();
  figures.rounds += 1;
  figures.runs += runIds.length;
  figures.completed += verdict.completed;
  figures.effects = totals.effects;
  figures.keys = totals.keys;
  figures.duplicates += verdict.duplicates;
  figures.lost += logs.problems.filter((problem) => problem.includes('not in the log')).length;
  figures.reexecutions += verdict.reexecutions;
  figures.lateToolRequests += verdict.lateRequests;
  figures.modelAsks += models.asked;
  figures.modelAnswersRecorded += models.recorded;
  figures.timersFired += logs.timersFired;
  // A paused process may send a request it decided on before the pause; nowhere else is a late ask allowed.
  figures.lateModelAsks += models.racing + (nemesis === 'pause' ? models.problems.length : 0);
  const problems = [...verdict.problems, ...logs.problems, ...(nemesis === 'pause' ? [] : models.problems)];
  if (open.length === 0 && verdict.completed === runIds.length && problems.length === 0) return undefined;
  return [
    `round ${round} (${nemesis}) failed: ${open.length} runs open, ${verdict.completed}/${runIds.length} completed`,
    ...problems.slice(0, 30).map((problem) => `  problem: ${problem}`),
    explain(verdict, cluster.slots.map((slot) => slot.outputTail()).join('\n')),
  ].join('\n');
}

/** The runs the schedule started, from the log's subjects (`sch-<id>-<tick seconds>`). */
async function scheduleRunIds(cluster: Cluster): Promise<string[]> {
  const info = await cluster.jsm.streams.info(STREAMS.runs, { subjects_filter: 'dura.run.*' });
  return Object.keys(info.state.subjects ?? {})
    .map((subject) => subject.slice('dura.run.'.length))
    .filter((runId) => runId.startsWith(`sch-${SCHEDULE}-`));
}
