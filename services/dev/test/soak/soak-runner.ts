// The chaos soak: runs submitted over a while, a killer SIGKILLing a random service replica every 1–2 s
// (its slot starts a new one), the nats-server and Postgres each killed and restarted once, then the contract
// checked for every run. Used by chaos-soak.e2e.spec.ts (short) and `npm run soak` (full).
import { setTimeout as sleep } from 'node:timers/promises';
import { STREAMS } from '@dura/contracts';
import { startCluster, type Cluster } from './cluster';
import { isKnownDriverCrash, isUnexplainedCrash } from './supervisor';
import { explain, verifyRuns, type Verdict } from './verify';
import { chargePlan, submitRun, waitForRunsToEnd } from './workload';

export interface SoakOptions {
  runs: number;
  steps: number;
  planners: number;
  gateways: number;
  /** How long the witness holds back each answer, so calls are in flight when kills land. */
  delayMs: number;
  /** Runs are submitted evenly over this window. */
  submitOverMs: number;
  /** The killer's pause between kills is uniform in [min, max]. */
  killEveryMs: readonly [number, number];
  /** When (from the start of the chaos) the nats-server, and Postgres, are killed and restarted. */
  natsRestartAtMs: number;
  pgRestartAtMs: number;
  /** How long each stays down. */
  outageMs: number;
  /** The killer stops when every run has ended, or after this long. */
  chaosMaxMs: number;
  /** After the chaos: how long the runs still open may take to end. */
  settleMs: number;
  /** Progress lines (default: kept for the failure explanation only). */
  progress?: (line: string) => void;
}

export interface SoakFigures {
  runs: number;
  steps: number;
  completed: number;
  kills: number;
  serviceRestarts: number;
  /** Processes that ended without being killed before they were ready: the broker or database was down. */
  failedStarts: number;
  /** Ready processes taken down by the known postgres.js bug (see isKnownDriverCrash) when Postgres died. */
  driverCrashes: number;
  /** Ready processes that ended on their own for any other reason. Must be 0. */
  crashes: number;
  natsRestarts: number;
  pgRestarts: number;
  duplicates: number;
  reexecutions: number;
  modelCalls: number;
  repeatedModelCalls: number;
  projectionMismatches: number;
  deadLetters: number;
  chaosMs: number;
  wallMs: number;
}

export interface SoakReport {
  ok: boolean;
  figures: SoakFigures;
  verdict: Verdict;
  /** Why it failed: stuck runs with their last events, problems, service output. Empty when ok. */
  explanation: string;
}

export const CI_SOAK: SoakOptions = {
  runs: 20,
  steps: 8,
  planners: 2,
  gateways: 2,
  delayMs: 300,
  submitOverMs: 25_000,
  killEveryMs: [1_000, 2_000],
  natsRestartAtMs: 8_000,
  pgRestartAtMs: 18_000,
  outageMs: 1_000,
  chaosMaxMs: 60_000,
  settleMs: 60_000,
};

export const FULL_SOAK: SoakOptions = {
  ...CI_SOAK,
  runs: 100,
  submitOverMs: 60_000,
  natsRestartAtMs: 20_000,
  pgRestartAtMs: 45_000,
  chaosMaxMs: 240_000,
  settleMs: 120_000,
};

function between([min, max]: readonly [number, number]): number {
  return min + Math.random() * (max - min);
}

async function deadLetterCount(cluster: Cluster): Promise<number> {
  try {
    return (await cluster.jsm.streams.info(STREAMS.deadLetters)).state.messages;
  } catch {
    return -1;
  }
}

/** Runs the soak on a cluster of its own and tears it down, whatever happens. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const started = Date.now();
  const lines: string[] = [];
  const say = (line: string) => {
    const stamped = `[soak +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`;
    lines.push(stamped);
    options.progress?.(stamped);
  };
  const cluster = await startCluster({ planners: options.planners, gateways: options.gateways });
  try {
    say(`cluster ready: ${cluster.slots.map((slot) => slot.label).join(', ')}`);
    const runIds = Array.from({ length: options.runs }, (_, i) => `soak-${String(i + 1).padStart(4, '0')}`);
    const chaosStart = Date.now();
    let chaos = true;
    let kills = 0;
    let natsRestarts = 0;
    let pgRestarts = 0;

    const killer = (async () => {
      while (chaos) {
        await sleep(between(options.killEveryMs));
        if (!chaos) break;
        const alive = cluster.slots.filter((slot) => slot.current() !== undefined);
        const victim = alive[Math.floor(Math.random() * alive.length)];
        if (victim && (await victim.kill())) kills += 1;
      }
    })();
    const infra = (async () => {
      await sleep(options.natsRestartAtMs);
      say('killing the nats-server');
      await cluster.restartNats(options.outageMs);
      natsRestarts += 1;
      say('nats-server back');
      await sleep(Math.max(0, chaosStart + options.pgRestartAtMs - Date.now()));
      say('killing Postgres');
      await cluster.restartPostgres(options.outageMs);
      pgRestarts += 1;
      say('Postgres back');
    })();
    const submitting = (async () => {
      for (const [i, runId] of runIds.entries()) {
        await submitRun(cluster, chargePlan(runId, options.steps, options.delayMs));
        await sleep(Math.max(0, chaosStart + ((i + 1) * options.submitOverMs) / runIds.length - Date.now()));
      }
      say(`all ${runIds.length} runs submitted`);
    })();

    let reportedAt = Date.now();
    const ending = waitForRunsToEnd(cluster, runIds, options.chaosMaxMs, (ended) => {
      if (Date.now() - reportedAt < 10_000) return;
      reportedAt = Date.now();
      say(`${ended}/${runIds.length} runs ended, ${kills} kills`);
    });
    await Promise.all([submitting, infra]);
    let open = await ending;
    chaos = false;
    await killer;
    const chaosMs = Date.now() - chaosStart;
    say(`chaos over after ${kills} kills; ${open.length} runs still open`);
    if (open.length > 0) {
      await cluster.ready(options.settleMs);
      open = await waitForRunsToEnd(cluster, open, options.settleMs);
    }

    const verdict = await verifyRuns(cluster, runIds);
    const exits = cluster.slots.flatMap((slot) => slot.exits());
    const figures: SoakFigures = {
      runs: runIds.length,
      steps: verdict.steps,
      completed: verdict.completed,
      kills,
      serviceRestarts: exits.length,
      failedStarts: exits.filter((exit) => !exit.killed && !exit.wasReady).length,
      driverCrashes: exits.filter((exit) => !exit.killed && exit.wasReady && isKnownDriverCrash(exit)).length,
      crashes: exits.filter(isUnexplainedCrash).length,
      natsRestarts,
      pgRestarts,
      duplicates: verdict.duplicates,
      reexecutions: verdict.reexecutions,
      modelCalls: verdict.modelCalls,
      repeatedModelCalls: verdict.repeatedModelCalls,
      projectionMismatches: verdict.projectionMismatches,
      deadLetters: await deadLetterCount(cluster),
      chaosMs,
      wallMs: Date.now() - started,
    };
    const ok =
      open.length === 0 &&
      verdict.completed === runIds.length &&
      verdict.steps === runIds.length * options.steps &&
      verdict.duplicates === 0 &&
      verdict.projectionMismatches === 0 &&
      verdict.problems.length === 0 &&
      figures.deadLetters === 0 &&
      figures.crashes === 0 &&
      natsRestarts === 1 &&
      pgRestarts === 1;
    const explanation = ok
      ? ''
      : [
          `soak failed: ${JSON.stringify(figures)}`,
          ...exits
            .filter(isUnexplainedCrash)
            .map((exit) => `unexplained crash, output tail:\n${exit.tail.slice(-3000)}`),
          explain(verdict, cluster.slots.map((slot) => slot.outputTail()).join('\n')),
          ...lines,
        ].join('\n');
    return { ok, figures, verdict, explanation };
  } finally {
    await cluster.close();
  }
}
