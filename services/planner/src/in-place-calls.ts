import type { JetStreamClient } from '@nats-io/jetstream';
import { DuraError, type RunEvent, type ToolTask } from '@dura/contracts';
import type { CallState } from '@dura/core';
import type { SentEvent } from '@dura/event-store';
import { RetryLater } from '@dura/service-kit';
import type { RunLoader } from './run-loading';
import { folded, type CachedRun } from './run-state-cache';
import { landedEvent, settleSpeculation, type Speculation } from './speculation';
import { toolTask } from './task-dispatch';

/** The gateway half of a worker, as the drive uses it (see the gateway's `local`). */
export interface LocalTools {
  /**
   * The client the gateway publishes observations with. Only when it is the planner's own do an observation
   * and the turn sent after it reach the server in that order, which a speculated turn needs.
   */
  publishesWith?: JetStreamClient;
  /** Whether calls of this tool run in place. */
  runs(tool: string): boolean;
  /**
   * Runs one call: claimed, run, recorded and published like a tool task's. `seq` is its observation's place
   * in the log when this process published it (unset: the relay publishes it and sends a decide task);
   * `retryAfterMs` says the attempt failed and the call is to be run again after that long. Given `after`
   * (the run's last sequence), the observation is appended only right behind it if it can be, and `event`
   * is the observation as stored when it was. `fresh`: the drive recorded the call's intent itself a moment
   * ago, so no attempt of it can have begun (a read-only tool then needs no claim before it runs). With
   * `speculate` (and `after`), the observation comes back as `sent`, before its ack. `handedOff`: the call
   * was not run here but sent as a tool task (see `createDirectCalls`); its observation comes with a decide
   * task, which drives the run on.
   */
  run(
    task: ToolTask,
    options?: { after?: number; fresh?: boolean; speculate?: boolean },
  ): Promise<{ seq?: number; retryAfterMs?: number; event?: RunEvent; sent?: SentEvent; handedOff?: boolean }>;
}

type LocalRunOutcome = Awaited<ReturnType<LocalTools['run']>>;

/**
 * Where the drive goes on from after calls ran in place: the run folded (`known`), or a read `through` a
 * sequence; or nowhere (`handedOff`): a call went out as a tool task, whose decide task drives the run on.
 */
export type Observed = { known: CachedRun; speculation?: Speculation } | { through: number } | { handedOff: true };

/** A call to retry sooner than this waits inside the drive; a later retry goes back to the stream. */
const LOCAL_RETRY_WAIT_MAX_MS = 30_000;
/** How long a drive waits for the relay to publish observations of calls it ran in place. */
const OBSERVED_WAIT_MAX_MS = 30_000;

/** A worker's drive running calls itself, and going on from their observations (speculated or landed). */
export interface InPlaceCalls {
  /**
   * Runs calls in place (see `localTools`), all at once. Resolves with the run as the drive goes on from:
   * folded (`known`) when the one call's observation landed right behind the run's last event, or read
   * once the relay published what it took over; else the sequence the next read must reach (`through`).
   * The drive that ran a call always goes on from its observation: no run waits for a message from outside.
   * A failed attempt to be retried soon is waited for here; a later one sends the driving message back.
   */
  run(
    local: LocalTools,
    run: CachedRun,
    calls: readonly CallState[],
    recordedAfter: number | undefined,
  ): Promise<Observed>;
  /**
   * Once a guessed observation landed, where the drive goes on from: the run folded with it, or a read
   * `through` it, also when the relay publishes it instead.
   */
  afterLanding(guessed: Speculation): Promise<{ known: CachedRun } | { through: number }>;
}

export function createInPlaceCalls(deps: {
  js: JetStreamClient;
  runs: Pick<RunLoader, 'load' | 'foldIn'>;
  /** How many runs this process is driving right now. */
  drives: () => number;
}): InPlaceCalls {
  async function run(
    local: LocalTools,
    run: CachedRun,
    calls: readonly CallState[],
    recordedAfter: number | undefined,
  ): Promise<Observed> {
    const after = calls.length === 1 ? { after: run.state.lastSeq } : {};
    // Only while this is the one run this process drives: the stream's next sequence is then most likely
    // the observation's. Under load another run's append lands first too often to be worth the guess.
    const speculate = calls.length === 1 && deps.drives() === 1 && local.publishesWith === deps.js;
    const settled = await Promise.allSettled(
      calls.map((call) => {
        // Its intent came with this drive's own last append, and no attempt of it is recorded.
        const fresh = recordedAfter !== undefined && call.requestedSeq > recordedAfter && call.attempts === 0;
        return local.run(toolTask(run, call), {
          ...after,
          ...(fresh ? { fresh } : {}),
          ...(speculate ? { speculate } : {}),
        });
      }),
    );
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    const sentOutcomes = settled.map((result) => (result as PromiseFulfilledResult<LocalRunOutcome>).value);
    const only = sentOutcomes.length === 1 ? sentOutcomes[0] : undefined;
    if (only?.sent && only.retryAfterMs === undefined) {
      // Not acknowledged yet, so not cached: the next append, guarded by the guess, is what confirms it.
      const observation = only.sent.as(run.state.lastSeq + 1);
      const known = folded(run, [observation]);
      return { known, speculation: { before: run, sent: only.sent, calls } };
    }
    const outcomes = await Promise.all(sentOutcomes.map(landedOutcome));
    const seqs = outcomes.map((outcome) => outcome.seq);
    const handedOff = outcomes.some((outcome) => outcome.handedOff === true);
    const retries = outcomes.flatMap((outcome) =>
      outcome.retryAfterMs === undefined ? [] : [outcome.retryAfterMs],
    );
    if (retries.length > 0) {
      const delay = Math.max(...retries);
      if (delay > LOCAL_RETRY_WAIT_MAX_MS)
        throw new RetryLater(`a call of run ${run.state.runId ?? ''} is retried in ${delay} ms`, delay);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    // An observation the relay publishes (queued behind another of its run, or a call another process had
    // finished) comes with a decide task, but that task may find the run as it was, or be dropped as a
    // duplicate of an earlier one: this drive ran the calls, so it goes on itself once the log holds them all.
    if (handedOff) return { handedOff: true };
    if (seqs.some((seq) => seq === undefined)) return { known: await untilObserved(run, calls) };
    const followed = outcomes.length === 1 ? outcomes[0]?.event : undefined;
    if (!followed) return { through: Math.max(...(seqs as number[])) };
    // The log took the observation right behind the run's last event: folding it is what a read would give.
    return { known: deps.runs.foldIn(run, [followed]) };
  }

  /**
   * The run once its log holds an observation of each of `calls` (an outcome, or a failed attempt to be
   * retried), read again and again: the relay publishes some of them. Gives up after a while with a
   * retryable error, so that the driving message comes again.
   */
  async function untilObserved(run: CachedRun, calls: readonly CallState[]): Promise<CachedRun> {
    const runId = run.state.runId as string;
    const deadline = Date.now() + OBSERVED_WAIT_MAX_MS;
    for (let pauseMs = 10; ; pauseMs = Math.min(500, pauseMs * 2)) {
      const loaded = await deps.runs.load(runId);
      const observed = calls.every((call) => {
        const now = loaded.state.calls.find((c) => c.callId === call.callId);
        return now === undefined || now.status !== 'pending' || now.attempts > call.attempts;
      });
      if (observed) return loaded;
      if (Date.now() > deadline)
        throw new DuraError(
          'observation_not_landed',
          `run ${runId}: the observations of its calls ${calls.map((c) => c.callId).join(', ')} did not reach its log within ${OBSERVED_WAIT_MAX_MS} ms`,
          { retryable: true },
        );
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }

  async function afterLanding(guessed: Speculation): Promise<{ known: CachedRun } | { through: number }> {
    const settled = await settleSpeculation(guessed, deps.runs);
    return settled ?? { known: await untilObserved(guessed.before, guessed.calls) };
  }

  return { run, afterLanding };
}

/** An outcome whose observation was sent, as it would have been had `run` waited for the ack. */
async function landedOutcome(outcome: LocalRunOutcome): Promise<LocalRunOutcome> {
  if (!outcome.sent) return outcome;
  const { sent, ...rest } = outcome;
  return { ...rest, ...(await landedEvent(sent)) };
}
