// The worker soak: code agents with parallel groups of 3–5 charges, a child run and a signal wait, on two
// workers (planner and gateway in one process, calls run in place) and a projector. A round is submitted, each
// run gets its one signal once it waits for it, and nothing else touches the runs: no retry, no nudge. With
// `killEveryMs`, a random worker is SIGKILLed that often (its slot starts a new one) while the round lasts.
import { setTimeout as sleep } from 'node:timers/promises';
import { createDuraClient } from '@dura/client';
import { STREAMS } from '@dura/contracts';
import { fold } from '@dura/core';
import { createEventStore } from '@dura/event-store';
import type { Cluster } from './cluster';
import { explain, verifyRuns, type Verdict } from './verify';
import { waitForRunsToEnd } from './workload';
import { SOAK_PARENT_TOTAL } from '../fixtures/worker-soak-agents';

export interface WorkerRoundOptions {
  /** Prefix of the round's run ids. */
  name: string;
  runs: number;
  /** How long the witness holds back each answer. */
  delayMs: number;
  /** Runs are submitted evenly over this window. */
  submitOverMs: number;
  /** The killer's pause between kills, uniform in [min, max]; unset: no kills. */
  killEveryMs?: readonly [number, number];
  /** The killer stops after this long (from the round's start), or once every run ended. */
  killForMs?: number;
  /** How long the round may take to end every run (the killer stops meanwhile when every run ended). */
  maxMs: number;
  progress?: (line: string) => void;
}

export interface WorkerRoundReport {
  ok: boolean;
  runIds: string[];
  kills: number;
  signalsSent: number;
  deadLetters: number;
  verdict: Verdict;
  /** Why it failed: runs that did not end, wrong outputs, problems, dead letters, service output. */
  explanation: string;
}

const SIGNAL = 'go';

async function lastDeadLetter(cluster: Cluster): Promise<number> {
  return (await cluster.jsm.streams.info(STREAMS.deadLetters)).state.last_seq;
}

/** The dead letters after sequence `after`, each cut short. */
async function deadLettersAfter(cluster: Cluster, after: number): Promise<string[]> {
  const last = await lastDeadLetter(cluster);
  const letters: string[] = [];
  for (let seq = after + 1; seq <= last; seq += 1) {
    const msg = await cluster.jsm.streams.getMessage(STREAMS.deadLetters, { seq }).catch(() => undefined);
    letters.push(msg ? msg.string().slice(0, 400) : `#${seq} (unreadable)`);
  }
  return letters;
}

/** Runs one round on `cluster` and checks every run of it (and its child) against the contract. */
export async function runWorkerRound(
  cluster: Cluster,
  options: WorkerRoundOptions,
): Promise<WorkerRoundReport> {
  const started = Date.now();
  const lines: string[] = [];
  const say = (line: string) => {
    const stamped = `[${options.name} +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`;
    lines.push(stamped);
    options.progress?.(stamped);
  };
  const client = createDuraClient(cluster);
  const store = createEventStore(cluster);
  const runIds = Array.from(
    { length: options.runs },
    (_, i) => `${options.name}-${String(i + 1).padStart(3, '0')}`,
  );
  const deadLettersBefore = await lastDeadLetter(cluster);
  let active = true;
  let kills = 0;
  let signalsSent = 0;

  const killer = (async () => {
    const every = options.killEveryMs;
    if (!every) return;
    const until = started + (options.killForMs ?? options.maxMs);
    while (active && Date.now() < until) {
      await sleep(every[0] + Math.random() * (every[1] - every[0]));
      if (!active || Date.now() >= until) break;
      const alive = cluster.slots.filter((slot) => slot.name === 'worker' && slot.current() !== undefined);
      const victim = alive[Math.floor(Math.random() * alive.length)];
      if (victim && (await victim.kill())) kills += 1;
    }
  })();

  // Each run gets its signal once, when its log shows the wait for it: the only message from outside.
  const signalled = new Set<string>();
  const signaller = (async () => {
    while (active && signalled.size < runIds.length) {
      for (const runId of runIds) {
        if (signalled.has(runId)) continue;
        const state = fold(await store.read(runId).catch(() => []));
        if (!state.waits.some((wait) => wait.kind === 'signal' && wait.signal === SIGNAL)) continue;
        try {
          await client.signal(runId, SIGNAL, { signalId: `${runId}-go` });
          signalled.add(runId);
          signalsSent += 1;
        } catch (err) {
          say(`signal to ${runId} not sent yet: ${(err as Error).message}`);
        }
      }
      await sleep(250);
    }
  })();

  for (const [i, runId] of runIds.entries()) {
    for (;;) {
      try {
        await client.submitRun({
          runId,
          agent: { kind: 'agent', name: 'soak-parent' },
          input: { delayMs: options.delayMs },
        });
        break;
      } catch (err) {
        if (Date.now() - started > options.maxMs) throw err;
        await sleep(250);
      }
    }
    await sleep(Math.max(0, started + ((i + 1) * options.submitOverMs) / runIds.length - Date.now()));
  }
  say(`${runIds.length} runs submitted`);
  let reportedAt = Date.now();
  const open = await waitForRunsToEnd(
    cluster,
    runIds,
    Math.max(0, started + options.maxMs - Date.now()),
    (ended) => {
      if (Date.now() - reportedAt < 10_000) return;
      reportedAt = Date.now();
      say(`${ended}/${runIds.length} runs ended, ${kills} kills, ${signalsSent} signals`);
    },
  );
  active = false;
  await Promise.all([killer, signaller]);
  say(`round over: ${open.length} runs open, ${kills} kills, ${signalsSent} signals`);

  // The children are checked like their parents: completed, each charge once.
  const all = [...runIds];
  for (const runId of runIds)
    all.push(...fold(await store.read(runId)).children.map((child) => child.childRunId));
  const verdict = await verifyRuns(cluster, all);
  const outputs = await Promise.all(
    runIds.map(async (runId) => [runId, fold(await store.read(runId)).output] as const),
  );
  const wrong = outputs.filter(
    ([, output]) => (output as { total?: unknown } | undefined)?.total !== SOAK_PARENT_TOTAL,
  );
  await cluster.ready().catch(() => undefined);
  const letters = await deadLettersAfter(cluster, deadLettersBefore);
  const operatorStops = (
    await Promise.all(
      all.map(async (runId) =>
        (await store.read(runId)).some((e) => e.type === 'wait_requested' && e.data.kind === 'operator')
          ? [runId]
          : [],
      ),
    )
  ).flat();
  const ok =
    open.length === 0 &&
    verdict.completed === all.length &&
    verdict.duplicates === 0 &&
    verdict.problems.length === 0 &&
    wrong.length === 0 &&
    letters.length === 0 &&
    operatorStops.length === 0 &&
    signalsSent === runIds.length;
  const explanation = ok
    ? ''
    : [
        `round ${options.name} failed: ${open.length} open, ${verdict.completed}/${all.length} completed, ` +
          `${kills} kills, ${signalsSent} signals, ${letters.length} dead letters`,
        ...wrong.map(
          ([runId, output]) =>
            `  ${runId} output ${JSON.stringify(output)} (expected total ${SOAK_PARENT_TOTAL})`,
        ),
        ...operatorStops.map((runId) => `  ${runId} stopped in an operator wait`),
        ...letters.map((letter) => `  dead letter: ${letter}`),
        explain(verdict, cluster.slots.map((slot) => slot.outputTail()).join('\n')),
        ...lines,
      ].join('\n');
  return { ok, runIds, kills, signalsSent, deadLetters: letters.length, verdict, explanation };
}
