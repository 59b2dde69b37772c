import type { JetStreamClient } from '@nats-io/jetstream';
import {
  DuraError,
  newEvent,
  SIGNAL_VERSION,
  SUBJECTS,
  TASK_VERSION,
  timerTaskMsgId,
  TOOL_TASK_WITH_REF_VERSION,
  toolTaskSubject,
  type LiveText,
  type NewEvent,
  type RunEvent,
  type SignalRequest,
  type TimerTask,
  type ToolTask,
} from '@dura/contracts';
import {
  CANCEL_SIGNAL,
  cancelReasonOf,
  fold,
  initialRunState,
  InvalidTransition,
  isTerminal,
  nextAction,
  type CallState,
  type ChildRunState,
  type EventDraft,
  type RunState,
  type WaitState,
} from '@dura/core';
import {
  ConcurrencyConflict,
  createLiveTokens,
  EventOverLimits,
  EventTooLarge,
  retryOnConflict,
  type AppendResult,
  type EventStore,
  type SentEvent,
} from '@dura/event-store';
import { duraMeter, duraTracer, failpoint, RetryLater, type Logger } from '@dura/service-kit';
import {
  DURA_ATTRS,
  DURA_METRICS,
  DURA_SPAN_EVENTS,
  GEN_AI_ATTRS,
  declareCounter,
  declareHistogram,
  injectContext,
  recordError,
  traceparentOf,
  withProducerSpan,
  withSpan,
} from '@dura/telemetry';
import { context as otelContext, SpanKind, trace, type Context } from '@opentelemetry/api';
import type { Model, ModelTurn } from '@dura/agents';
import { CAPACITY_WAIT_PREFIX, failedDraft, plannerStep, type PlannerStep } from '@dura/agents';
import type { Cancellations } from './cancellations';
import type { Parking } from './parking';
import { folded, RunStateCache, type CachedRun } from './run-state-cache';
import { trustedSnapshot } from './snapshot-resume';
import { createSnapshotStore, type SnapshotStore } from './snapshot-store';
import { createSnapshotWriter } from './snapshot-writer';
import { decisionIds } from './decision-ids';
import { reportToParent } from './parent-report';
import { unlessSuperseded } from './superseded-watch';
import type { RunFlow } from './run-flow';
import { createTimerDue } from './timer-due';

export interface RunDriverDeps {
  store: EventStore;
  js: JetStreamClient;
  model: Model;
  log: Logger;
  clock: () => Date;
  /** Re-fold-and-retry budget when another replica keeps appending first. */
  maxConflicts?: number;
  cacheSize?: number;
  /**
   * Snapshots bound what a fresh process reads to resume a long run: by default the KV bucket
   * `dura_snapshots` (R1) and one snapshot per 100 new events. `false` turns them off.
   */
  snapshots?: false | SnapshotOptions;
  /** Where cancelled runs are marked for the gateways to abort their in-flight calls. */
  cancellations?: Cancellations;
  /** Where runs pinned to a version this planner does not serve wait for one that does. */
  parking?: Parking;
  /** Without `parking`: how long such a run's decide task waits before it is offered again (default 5 s). */
  notServedDelayMs?: number;
  /** Seals the secret argument fields of a decision's tool calls before its `thought` is recorded. */
  sealDecision?: (decision: ModelTurn['decision'], scope: string) => ModelTurn['decision'];
  /**
   * Tools this process runs itself (a worker: planner and gateway in one process): their calls run in place,
   * inside the drive, instead of going out as tool tasks, and the drive goes on with their observations.
   */
  localTools?: LocalTools;
  /** Model limits and concurrency keys: asked before each model call; told when a run ends. */
  flow?: RunFlow;
}

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
   * `speculate` (and `after`), the observation comes back as `sent`, before its ack.
   */
  run(
    task: ToolTask,
    options?: { after?: number; fresh?: boolean; speculate?: boolean },
  ): Promise<{ seq?: number; retryAfterMs?: number; event?: RunEvent; sent?: SentEvent }>;
}

/**
 * A run folded with an observation that is sent but not acknowledged, at the sequence it takes if nothing
 * else reaches the stream first: the drive asks the model meanwhile, and the next turn is appended guarded
 * by that sequence and by following the observation, so it lands only if the guess was right.
 */
interface Speculation {
  /** The run before the observation, as cached. */
  before: CachedRun;
  sent: SentEvent;
  /** The call whose observation it is. */
  calls: readonly CallState[];
}

type LocalRunOutcome = Awaited<ReturnType<LocalTools['run']>>;

/** A call to retry sooner than this waits inside the drive; a later retry goes back to the stream. */
const LOCAL_RETRY_WAIT_MAX_MS = 30_000;
/** How long a drive waits for the relay to publish observations of calls it ran in place. */
const OBSERVED_WAIT_MAX_MS = 30_000;

export interface SnapshotOptions {
  /** Events a run grows by before its next snapshot (default 100): a resume reads at most about this many. */
  every?: number;
  /** Replicas of the bucket when this driver creates it (default 1). */
  replicas?: number;
  store?: SnapshotStore;
}

export const DEFAULT_SNAPSHOT_EVERY = 100;

/** A model turn's events go out in one round trip (see `append`) while this process drives at most this many runs. */
const PIPELINE_MAX_DRIVES = 4;

// Snapshots are recorded only in KV, never as `snapshot_taken` events in the log. An append of ours would
// need the run's expected last sequence like any decision, so it would race the deciders and make one of
// them lose and re-fold for nothing, and it would move `lastSeq` past the very state it describes. A cache
// has no place in the truth anyway: the log stays free of it, and losing the bucket loses nothing.

export interface DriveOptions {
  /** W3C traceparent the appended events carry. */
  trace?: string;
  /**
   * A sequence the run's log is known to hold (the event a decide task is about): the catch-up read of a
   * cached run stops there. Whatever a later event needs comes with its own decide task, and a later
   * event of any kind makes the next guarded append fail and re-read, so nothing is missed.
   */
  afterSeq?: number;
  /** A slot the run may be waiting for came free: its open wait for capacity ends now (see `RunFlow`). */
  wake?: boolean;
}

interface Decision {
  ctx: Context;
  recorded(): void;
  /** Its thought (or the model's refusal) is in the log: the drive's next model call is another decision. */
  readonly decided: boolean;
  end(err: unknown): void;
}

export interface DriveOutcome {
  state: RunState;
  modelCalls: number;
  dispatched: number;
}

/**
 * Moves one run forward as far as it can go without waiting: records what a recorded decision implies,
 * (re-)dispatches pending tool calls, and asks the model only when the log holds no unfinished decision.
 * Safe to call any number of times, from any replica: every append is guarded by the run's last sequence.
 */
export function createRunDriver(deps: RunDriverDeps) {
  const cache = new RunStateCache(deps.cacheSize ?? 1000);
  const timerDue = createTimerDue(deps.store);
  const tracer = duraTracer();
  const decisionDuration = declareHistogram(duraMeter(), DURA_METRICS.decisionDuration);
  const conflictsLost = declareCounter(duraMeter(), DURA_METRICS.conflictsLost);
  const maxConflicts = deps.maxConflicts ?? 20;
  const snapshotOptions = deps.snapshots === false ? undefined : (deps.snapshots ?? {});
  const snapshots =
    snapshotOptions &&
    (snapshotOptions.store ?? createSnapshotStore({ js: deps.js, replicas: snapshotOptions.replicas ?? 1 }));
  const writer =
    snapshots &&
    createSnapshotWriter({
      snapshots,
      every: snapshotOptions?.every ?? DEFAULT_SNAPSHOT_EVERY,
      log: deps.log,
    });

  /**
   * `from` with the log's events after it folded in. A run already folded up to some point has a short
   * tail, read by direct gets; `through` (a sequence the log is known to hold) lets that read stop there.
   */
  async function catchUp(runId: string, from: CachedRun, through?: number): Promise<CachedRun> {
    // Already folded through it: the same reasoning as a read that stops there (see `DriveOptions.afterSeq`).
    if (through !== undefined && from.state.lastSeq >= through) return from;
    const fromSeq = from.state.lastSeq + 1;
    const tail =
      from.state.lastSeq === 0
        ? await deps.store.read(runId, { fromSeq })
        : await deps.store.readTail(runId, {
            fromSeq,
            ...(through !== undefined && through >= fromSeq ? { through } : {}),
          });
    if (tail.length === 0) return from;
    return folded(from, tail);
  }

  /** A run this process does not hold: its trusted snapshot and the log's tail after it, else the whole log. */
  async function resume(runId: string): Promise<CachedRun> {
    const snapshot =
      snapshots && (await trustedSnapshot({ store: deps.store, snapshots, log: deps.log }, runId));
    if (snapshot) {
      const from = {
        state: snapshot.state,
        lastEventId: snapshot.eventId,
        snapshotCount: snapshot.state.eventCount,
      };
      try {
        const run = await catchUp(runId, from);
        const tail = run.state.eventCount - from.snapshotCount;
        deps.log.debug('resumed from a snapshot', { runId, seq: snapshot.seq, tail });
        markResumed(run, snapshot.seq);
        return run;
      } catch (err) {
        if (!(err instanceof InvalidTransition)) throw err;
        const reason = `the log after seq ${snapshot.seq} does not follow it: ${err.message}`;
        deps.log.warn('snapshot ignored; folding the whole log', { runId, reason });
      }
    }
    const run = await catchUp(runId, { state: initialRunState(), lastEventId: undefined, snapshotCount: 0 });
    markResumed(run, undefined);
    return run;
  }

  /**
   * This process picked up a run it did not hold (a restart, another replica's run): the trace gets a span
   * event saying so. The run's trace itself goes on unbroken, since the context travels with its messages.
   */
  function markResumed(run: CachedRun, snapshotSeq: number | undefined): void {
    if (run.state.runId === null || run.state.lastSeq === 0) return;
    trace.getActiveSpan()?.addEvent(DURA_SPAN_EVENTS.runResumed, {
      [DURA_ATTRS.runId]: run.state.runId,
      [DURA_ATTRS.eventSeq]: run.state.lastSeq,
      'dura.run.events': run.state.eventCount,
      'dura.run.status': run.state.status,
      ...(snapshotSeq === undefined ? {} : { 'dura.snapshot.seq': snapshotSeq }),
    });
  }

  async function load(runId: string, through?: number): Promise<CachedRun> {
    const cached = cache.get(runId);
    const loaded = cached ? await catchUp(runId, cached, through) : await resume(runId);
    if (loaded.state.runId === null) return loaded;
    const snapshotCount = writer?.consider(loaded) ?? loaded.snapshotCount;
    const next = snapshotCount === loaded.snapshotCount ? loaded : { ...loaded, snapshotCount };
    if (next !== cached) cache.set(runId, next);
    return next;
  }

  /**
   * Appends what the run's state implies, guarded by its last sequence. Returns the run with the events
   * folded in: a guarded append that succeeded means nothing else reached the log in between, so the next
   * step needs no read. A duplicate ack (a retry, or a racing replica's identical decision) returns nothing:
   * the caller re-reads. With a `speculation`, `run` holds an observation not acknowledged yet, and the
   * append lands only right behind it at the sequence guessed for it; when the observation landed right
   * behind the run's last event at another sequence, the same drafts go behind it there.
   */
  async function append(
    run: CachedRun,
    drafts: readonly EventDraft[],
    fallbackTrace: string | undefined,
    turn = false,
    speculation?: Speculation,
  ): Promise<CachedRun | undefined> {
    const { state } = run;
    const runId = state.runId as string;
    const ts = deps.clock().toISOString();
    const trace = traceparentOf() ?? fallbackTrace;
    const events = eventsOf(run, drafts, { ts, turn, ...(trace ? { trace } : {}) });
    // Sent at once only while this process drives few runs: under load another run's append often lands
    // in between, and the one-by-one path costs less than a refused publish and its retry.
    const pipelined = turn && turns.size <= PIPELINE_MAX_DRIVES;
    let result: AppendResult;
    // The observation goes first, in the same socket write as this append when it has not gone out yet.
    speculation?.sent.send();
    try {
      result = await deps.store.append(runId, events, {
        expectedSeq: state.lastSeq,
        pipelined,
        ...(speculation ? { follows: speculation.sent.id } : {}),
      });
    } catch (err) {
      if (!speculation || !(err instanceof ConcurrencyConflict)) throw err;
      const settled = await settleSpeculation(speculation);
      if (settled && 'known' in settled && settled.known.state.lastSeq !== state.lastSeq) {
        deps.log.debug('an observation landed at another sequence than guessed', {
          runId,
          guessed: state.lastSeq,
          landed: settled.known.state.lastSeq,
        });
        return append(settled.known, drafts, fallbackTrace, turn);
      }
      // Something reached the run besides the observation: the decision is made again from the log.
      throw err;
    }
    if (result.duplicate) return undefined;
    const recorded = events.map((event, i) => ({ ...event, seq: result.seqs[i] as number }));
    const next = folded(run, recorded);
    cache.set(runId, next);
    return next;
  }

  function toolTask(run: CachedRun, call: CallState): ToolTask {
    const runId = run.state.runId as string;
    return {
      v: call.argsRef ? TOOL_TASK_WITH_REF_VERSION : TASK_VERSION,
      runId,
      callId: call.callId,
      step: call.step,
      tool: call.tool,
      args: call.args,
      ...(call.argsRef ? { argsRef: call.argsRef } : {}),
      idempotencyKey: call.idempotencyKey,
      causationId: call.intentId,
      correlationId: run.state.correlationId ?? runId,
    };
  }

  async function dispatch(run: CachedRun, calls: readonly CallState[]): Promise<void> {
    const runId = run.state.runId as string;
    await Promise.all(
      calls.map((call) => {
        const task = toolTask(run, call);
        const subject = toolTaskSubject(call.tool);
        return withProducerSpan(
          tracer,
          {
            destination: subject,
            destinationTemplate: 'dura.task.tool.{tool}',
            messageId: call.idempotencyKey,
            attributes: {
              [DURA_ATTRS.runId]: runId,
              [DURA_ATTRS.toolName]: call.tool,
              [DURA_ATTRS.toolCallId]: call.callId,
              [DURA_ATTRS.idempotencyKey]: call.idempotencyKey,
            },
          },
          (headers, span) => {
            const trace = traceparentOf(span);
            return deps.js.publish(subject, JSON.stringify(trace ? { ...task, trace } : task), {
              msgID: call.idempotencyKey,
              headers,
            });
          },
        );
      }),
    );
  }

  /**
   * Runs calls in place (see `localTools`), all at once. Resolves with the run as the drive goes on from:
   * folded (`known`) when the one call's observation landed right behind the run's last event, or read
   * once the relay published what it took over; else the sequence the next read must reach (`through`).
   * The drive that ran a call always goes on from its observation: no run waits for a message from outside.
   * A failed attempt to be retried soon is waited for here; a later one sends the driving message back.
   */
  async function runInPlace(
    local: LocalTools,
    run: CachedRun,
    calls: readonly CallState[],
    recordedAfter: number | undefined,
  ): Promise<{ known: CachedRun; speculation?: Speculation } | { through: number }> {
    const after = calls.length === 1 ? { after: run.state.lastSeq } : {};
    // Only while this is the one run this process drives: the stream's next sequence is then most likely
    // the observation's. Under load another run's append lands first too often to be worth the guess.
    const speculate = calls.length === 1 && turns.size === 1 && local.publishesWith === deps.js;
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
      const observation = only.sent.as(run.state.lastSeq + 1);
      const known = folded(run, [observation]);
      return { known, speculation: { before: run, sent: only.sent, calls } };
    }
    const outcomes = await Promise.all(sentOutcomes.map(landedOutcome));
    const seqs = outcomes.map((outcome) => outcome.seq);
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
    if (seqs.some((seq) => seq === undefined)) return { known: await untilObserved(run, calls) };
    const followed = outcomes.length === 1 ? outcomes[0]?.event : undefined;
    if (!followed) return { through: Math.max(...(seqs as number[])) };
    // The log took the observation right behind the run's last event: folding it is what a read would give.
    const known = folded(run, [followed]);
    cache.set(run.state.runId as string, known);
    return { known };
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
      const loaded = await load(runId);
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

  /** Where a sent event landed, with the event as stored when it landed right behind the run's last one. */
  async function landedEvent(sent: SentEvent): Promise<{ seq: number; event?: RunEvent } | undefined> {
    const landed = await sent.landed();
    if (!landed) return undefined;
    return { seq: landed.seq, ...(landed.followed ? { event: sent.as(landed.seq) } : {}) };
  }

  /** An outcome whose observation was sent, as it would have been had `run` waited for the ack. */
  async function landedOutcome(outcome: LocalRunOutcome): Promise<LocalRunOutcome> {
    if (!outcome.sent) return outcome;
    const { sent, ...rest } = outcome;
    return { ...rest, ...(await landedEvent(sent)) };
  }

  /**
   * The run once a speculated observation has landed: folded from the stored event when it landed right
   * behind the run's last event (cached, as a read would give it), else the sequence the next read must
   * reach; undefined when the relay publishes it (its decide task drives the run on).
   */
  async function settleSpeculation(
    speculation: Speculation,
  ): Promise<{ known: CachedRun } | { through: number } | undefined> {
    const landed = await landedEvent(speculation.sent);
    if (!landed) return undefined;
    const { event } = landed;
    if (!event) return { through: landed.seq };
    const { before } = speculation;
    const known = folded(before, [event]);
    cache.set(before.state.runId as string, known);
    return { known };
  }

  /** Hands out the timers of open waits and the requests of running children (both dedupe on their ids). */
  async function dispatchWaits(
    run: CachedRun,
    timers: readonly WaitState[],
    children: readonly ChildRunState[],
  ): Promise<void> {
    const runId = run.state.runId as string;
    const correlationId = run.state.correlationId ?? runId;
    const trace = traceparentOf();
    await Promise.all([
      ...timers.map(async (wait) => {
        const task: TimerTask = {
          v: TASK_VERSION,
          runId,
          waitId: wait.waitId,
          dueAt: await timerDue(run.state, wait),
          causationId: run.lastEventId ?? runId,
          correlationId,
          ...(trace ? { trace } : {}),
        };
        return deps.js.publish(SUBJECTS.timerTask, JSON.stringify(task), {
          msgID: timerTaskMsgId(runId, wait.waitId),
          headers: injectContext(),
        });
      }),
      // A child runs in its parent's trace, which its end then carries back to the parent.
      ...children.map((child) =>
        deps.js.publish(SUBJECTS.submit, JSON.stringify(child.request), {
          msgID: child.childRunId,
          headers: injectContext(),
        }),
      ),
    ]);
  }

  /**
   * Duties of a finished run, done on every drive that finds it finished (each is idempotent): a child
   * reports to its parent; a cancelled run is marked for the gateways and cancels its running children.
   */
  async function settleFinished(run: CachedRun): Promise<void> {
    const { state } = run;
    const runId = state.runId as string;
    await deps.flow?.finished(state);
    const parent = state.request?.parent;
    if (parent) {
      failpoint('planner.before-parent-report');
      await reportFinished(state, parent.runId);
    }
    if (state.status !== 'cancelled') return;
    await deps.cancellations?.mark(runId, cancelReason(state));
    await Promise.all(
      state.children
        .filter((child) => child.status === 'running')
        .map((child) => {
          const signal: SignalRequest = {
            v: SIGNAL_VERSION,
            runId: child.childRunId,
            signalId: `parent-cancelled:${runId}`,
            name: CANCEL_SIGNAL,
            payload: { reason: `parent run ${runId} was cancelled` },
          };
          return deps.js.publish(SUBJECTS.signal, JSON.stringify(signal), {
            msgID: `signal:${child.childRunId}:${signal.signalId}`,
          });
        }),
    );
  }

  async function reportFinished(state: RunState, parentRunId: string): Promise<void> {
    const runId = state.runId as string;
    const status = state.status === 'completed' || state.status === 'cancelled' ? state.status : 'failed';
    await reportToParent(deps, parentRunId, {
      childRunId: runId,
      status,
      ...(state.output === undefined ? {} : { output: state.output }),
      correlationId: state.correlationId ?? runId,
      causationId: `${runId}@${state.lastSeq}`,
    });
  }

  /**
   * The decision's live model text, to `DURA_TOKENS` off the decision's path; each drive asks as a new attempt,
   * so a reader drops what a crashed or superseded drive streamed.
   */
  function liveFor(runId: string, decision: number): LiveText {
    return createLiveTokens(deps.js, runId, decision, {
      onLost: (attempt, err) =>
        deps.log.warn('live model text could not be stored; its readers are told of the gap', {
          runId,
          decision,
          attempt,
          err,
        }),
    });
  }

  /** The model call, as a client span with the model and its token usage (GenAI semantic conventions). */
  function callModel(state: RunState, request: NonNullable<RunState['request']>) {
    return withSpan(
      tracer,
      'chat',
      { kind: SpanKind.CLIENT, attributes: { [GEN_AI_ATTRS.operationName]: 'chat' } },
      async (span) => {
        const live = liveFor(request.runId, state.decisions);
        const turn = await unlessSuperseded(deps.store, request.runId, state.lastSeq, (signal) =>
          deps.model.decide({ state, request, live, signal }),
        );
        span.updateName(`chat ${turn.model.id}`);
        span.setAttributes({
          [GEN_AI_ATTRS.requestModel]: turn.model.id,
          [GEN_AI_ATTRS.responseModel]: turn.model.id,
          'dura.model.prompt_version': turn.model.promptVersion,
          [GEN_AI_ATTRS.inputTokens]: turn.usage.inputTokens,
          [GEN_AI_ATTRS.outputTokens]: turn.usage.outputTokens,
          'gen_ai.response.finish_reasons': [turn.finishReason],
        });
        return turn;
      },
    );
  }

  /** Opens the span of one decision; `recorded()` times it, `end()` closes it once the drive is done. */
  function startDecision(runId: string, step: number): Decision {
    const span = tracer.startSpan('dura.decision', {
      attributes: { [DURA_ATTRS.runId]: runId, 'dura.run.step': step },
    });
    const stop = decisionDuration.startTimer();
    let timed = false;
    return {
      ctx: trace.setSpan(otelContext.active(), span),
      get decided() {
        return timed;
      },
      recorded: () => {
        if (!timed) stop({ outcome: 'recorded' });
        timed = true;
      },
      end: (err) => {
        if (err !== undefined) recordError(span, err);
        if (!timed) stop({ outcome: err === undefined ? 'superseded' : 'failed' });
        span.end();
      },
    };
  }

  /**
   * A run pinned to a version this replica does not serve is left to a replica that does: parked until one
   * is up (true), or, without parking, offered again later.
   */
  async function parkedElsewhere(state: RunState): Promise<boolean> {
    const pinned = state.pinned;
    if (!pinned || !deps.model.serves || deps.model.serves(pinned)) return false;
    if (deps.parking) {
      await deps.parking.park(state.runId as string, pinned, state.lastSeq);
      deps.log.info('run parked for a planner that serves its pinned version', {
        runId: state.runId,
        pinned: `${pinned.agent}@${pinned.version} (prompt ${pinned.promptVersion})`,
      });
      return true;
    }
    throw new RetryLater(
      `run ${state.runId ?? ''} is pinned to agent ${pinned.agent}@${pinned.version} (prompt ${pinned.promptVersion}), ` +
        'which this planner does not serve; leaving it to a planner that does',
      deps.notServedDelayMs ?? 5_000,
    );
  }

  /**
   * The log read ended before an event the decide task names: a stream leader elected a moment ago can answer
   * before it has applied every stored message. Acting on that read would ack the task and leave the run
   * waiting for nothing, so the task is redelivered with the consumer's growing backoff until the read
   * reaches the event (and dead-lettered, with this reason, if it never does).
   */
  function staleRead(runId: string, lastSeq: number, afterSeq: number): DuraError {
    deps.log.warn('the log read ended before the event the decide task names; retrying it', {
      runId,
      readThrough: lastSeq,
      afterSeq,
    });
    return new DuraError(
      'log_read_behind',
      `run ${runId}: the log read ended at seq ${lastSeq}, before seq ${afterSeq} that the decide task names`,
      { retryable: true },
    );
  }

  /** The drive of each run under way in this process: a run's drives take turns. */
  const turns = new Map<string, Promise<unknown>>();

  /**
   * Drives of one run take turns in this process, so two decide tasks arriving together (a restart, a
   * redelivery next to a new observation) cannot both ask the model for the same decision: the second
   * finds the first one's decision in the cached log. Across replicas, the guarded append decides.
   */
  async function drive(runId: string, options: DriveOptions = {}): Promise<DriveOutcome> {
    const previous = turns.get(runId);
    const mine = (previous ?? Promise.resolve()).catch(() => undefined).then(() => driveNow(runId, options));
    turns.set(runId, mine);
    try {
      return await mine;
    } finally {
      if (turns.get(runId) === mine) turns.delete(runId);
    }
  }

  async function driveNow(runId: string, options: DriveOptions): Promise<DriveOutcome> {
    // A decision's span stays open until the drive's next decision starts (or the drive ends): the intents
    // it records and the tool calls they dispatch (or run in place) hang under it.
    let decision: Decision | undefined;
    const inDecision = <T>(fn: () => Promise<T>): Promise<T> =>
      decision ? otelContext.with(decision.ctx, fn) : fn();
    // Counted across lost races: a model call is made once per decision, whoever records it.
    let modelCalls = 0;
    let dispatched = 0;
    let through = options.afterSeq;
    let wake = options.wake === true;
    let failure: unknown;
    try {
      return await retryOnConflict(driveLoop, {
        maxConflicts,
        onConflict: (conflicts) => {
          conflictsLost.add(1);
          trace.getActiveSpan()?.addEvent(DURA_SPAN_EVENTS.conflictLost, { [DURA_ATTRS.runId]: runId });
          deps.log.debug('lost an append race; re-folding', { runId, conflicts });
        },
        giveUp: (conflicts, err) =>
          new DuraError('too_many_conflicts', `run ${runId}: lost ${conflicts} append races in a row`, {
            retryable: true,
            cause: err,
          }),
      });
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      decision?.end(failure);
    }

    /**
     * Appends a planner step, with the crash points the fault tests kill at. A model answer the log cannot
     * hold (over its limits or the server's max_payload) is never recorded, and asking again costs as much:
     * the run fails with the reason, never wedges.
     */
    async function record(
      run: CachedRun,
      step: PlannerStep,
      speculation?: Speculation,
    ): Promise<CachedRun | undefined> {
      if (step.kind === 'none') return undefined;
      const decided = step.kind === 'record' || step.kind === 'summary' || step.kind === 'model_refused';
      const inSpan = decided || step.kind === 'thought' ? inDecision : <T>(fn: () => Promise<T>) => fn();
      if (step.kind === 'thought') failpoint('planner.after-model');
      // A thought and what it implies (its intents, or the end of the run) are recorded as one append.
      const drafts =
        step.kind === 'thought' ? [...step.drafts, ...impliedBy(run.state, step.drafts)] : step.drafts;
      const turn = drafts.length > step.drafts.length;
      let recorded = drafts;
      const appended = await inSpan(() => append(run, drafts, options.trace, turn, speculation)).catch(
        (err: unknown) => {
          if (step.kind !== 'thought' || !(err instanceof EventOverLimits || err instanceof EventTooLarge))
            throw err;
          recorded = [failedDraft(err)];
          return inSpan(() => append(run, recorded, options.trace, false, speculation));
        },
      );
      // The crash points follow what was recorded: a refused turn recorded only the run's failure.
      const types = new Set(recorded.map((draft) => draft.type));
      if (step.kind === 'record' || turn) {
        if (types.has('tool_call_requested')) failpoint('planner.after-intent');
        if (types.has('wait_requested')) failpoint('planner.after-wait');
        if (types.has('run_cancelled')) failpoint('planner.after-cancel');
      }
      if (step.kind === 'reserve') failpoint('planner.after-reserve');
      if (step.kind === 'summary') failpoint('planner.after-summary');
      if (step.kind === 'thought' || step.kind === 'model_refused') decision?.recorded();
      return appended;
    }

    /** Drives until the run waits; a lost append race starts it again from a fresh read of the log. */
    async function driveLoop(): Promise<DriveOutcome> {
      // The run as our own last append left it; undefined: read the log's tail first.
      let known: CachedRun | undefined;
      // While `known` is what our own append of a decision left: the sequence that append followed.
      let ownAfter: number | undefined;
      // While `known` holds an observation on its way to the log (see `Speculation`).
      let speculation: Speculation | undefined;
      /**
       * Once a guessed observation landed, the loop goes on from it (`known`, or a read `through` it), also
       * when the relay publishes it instead.
       */
      async function goOnFromLanded(guessed: Speculation): Promise<void> {
        const settled = await settleSpeculation(guessed);
        if (settled === undefined) known = await untilObserved(guessed.before, guessed.calls);
        else if ('known' in settled) known = settled.known;
        else through = settled.through;
        ownAfter = undefined;
      }
      for (;;) {
        const run = known ?? (await load(runId, through));
        const recordedAfter = known === undefined ? undefined : ownAfter;
        const guessed = known === undefined ? undefined : speculation;
        known = undefined;
        ownAfter = undefined;
        speculation = undefined;
        if (through !== undefined && run.state.lastSeq < through)
          throw staleRead(runId, run.state.lastSeq, through);
        // Only the first read may stop at the hint; after a lost race the whole tail is read.
        through = undefined;
        const action = nextAction(run.state);
        if (guessed && action.kind !== 'decide') {
          // Only a model turn goes out on the guess; anything else waits for the observation to land.
          await goOnFromLanded(guessed);
          continue;
        }
        if (action.kind !== 'idle' && (await parkedElsewhere(run.state)))
          return { state: run.state, modelCalls, dispatched };
        const capacityWait = run.state.waiting;
        if (
          wake &&
          run.state.status === 'waiting' &&
          capacityWait?.waitId.startsWith(CAPACITY_WAIT_PREFIX) &&
          isSlotWait(capacityWait.reason)
        ) {
          // Its timer would end it later; a freed slot ends it now, and the call asks for admission again.
          const drafts: EventDraft[] = [{ type: 'timer_fired', data: { waitId: capacityWait.waitId } }];
          known = await record(run, { kind: 'record', drafts });
          wake = false;
          continue;
        }
        switch (action.kind) {
          case 'idle':
            if (action.reason === 'finished' && isTerminal(run.state.status)) {
              deps.model.finished?.(runId);
              await settleFinished(run);
            }
            return { state: run.state, modelCalls, dispatched };
          case 'dispatch': {
            const local = deps.localTools;
            const inPlace = local ? action.calls.filter((call) => local.runs(call.tool)) : [];
            const sent =
              inPlace.length === 0 ? action.calls : action.calls.filter((c) => !inPlace.includes(c));
            await inDecision(() =>
              Promise.all([dispatch(run, sent), dispatchWaits(run, action.timers, action.children)]),
            );
            dispatched += action.calls.length;
            if (!local || inPlace.length === 0) return { state: run.state, modelCalls, dispatched };
            const observed = await inDecision(() => runInPlace(local, run, inPlace, recordedAfter));
            // The observations are in the log (or on their way): folded already, or the next read reaches them.
            if ('known' in observed) {
              known = observed.known;
              speculation = observed.speculation;
            } else through = observed.through;
            break;
          }
          case 'start':
          case 'record':
          case 'decide': {
            const step = await plannerStep(run.state, action, {
              model: deps.model,
              now: deps.clock(),
              around: (fn) => {
                // One span per decision: a drive that goes on in place makes several.
                if (decision?.decided) {
                  decision.end(undefined);
                  decision = undefined;
                }
                decision ??= startDecision(runId, run.state.steps);
                return inDecision(fn);
              },
              ask: ({ state, request }) => callModel(state, request),
              ...(deps.flow ? { admit: (input) => (deps.flow as RunFlow).admit(input) } : {}),
              live: liveFor(runId, run.state.decisions),
              ...(deps.sealDecision ? { seal: deps.sealDecision } : {}),
            });
            if (step.kind === 'thought') modelCalls += 1;
            known = await record(run, step, guessed);
            ownAfter = run.state.lastSeq;
            // Nothing recorded behind the guess: go on from where the observation landed.
            if (known === undefined && guessed) await goOnFromLanded(guessed);
            break;
          }
        }
      }
    }
  }

  /**
   * What the decider records right after a thought (`nextAction` once it is folded): the intents of its
   * calls, or the end of the run. Empty when it is anything else, or the thought cannot be folded.
   */
  function impliedBy(state: RunState, thought: readonly EventDraft[]): EventDraft[] {
    const provisional = eventsOf({ state }, thought, { ts: deps.clock().toISOString(), turn: true }).map(
      (event, index) => ({ ...event, seq: state.lastSeq + 1 + index }),
    ) as RunEvent[];
    try {
      const action = nextAction(fold(provisional, state));
      return action.kind === 'record' ? action.events : [];
    } catch (err) {
      if (err instanceof InvalidTransition) return [];
      throw err;
    }
  }

  /** Settles once the snapshot writes started so far have finished (call before stopping; tests use it). */
  function flushSnapshots(): Promise<void> {
    return writer?.flush() ?? Promise.resolve();
  }

  /**
   * A run whose whole log this process has just written (the intake's first append, guarded by sequence 0):
   * held as folded from `recorded`, so its first drive (given `afterSeq` = the last of them) reads nothing.
   * A run already held is left as it is.
   */
  function adopt(runId: string, recorded: readonly RunEvent[]): void {
    if (cache.get(runId) || recorded.length === 0) return;
    cache.set(
      runId,
      folded({ state: initialRunState(), lastEventId: undefined, snapshotCount: 0 }, recorded),
    );
  }

  /** Whether a drive of the run is under way in this process (a worker's drive holds the run while a call runs in place). */
  function driving(runId: string): boolean {
    return turns.has(runId);
  }

  return { drive, load, flushSnapshots, driving, adopt };
}

export type RunDriver = ReturnType<typeof createRunDriver>;

function cancelReason(state: RunState): string {
  const signal = state.signals.find((s) => s.name === CANCEL_SIGNAL);
  return signal ? cancelReasonOf(signal) : 'cancelled';
}

/**
 * The events an append of `drafts` records right behind the run's last event: ids from the run's last
 * sequence and each draft's place (a retried append is then a duplicate), caused by the run's last event,
 * or in a turn (a thought and what it implies) the later ones by the thought.
 */
function eventsOf(
  run: { state: RunState; lastEventId?: string | undefined },
  drafts: readonly EventDraft[],
  options: { ts: string; turn: boolean; trace?: string },
): NewEvent[] {
  const { state } = run;
  const runId = state.runId as string;
  const events: NewEvent[] = [];
  const ids = decisionIds(runId, state.lastSeq, drafts);
  for (const [index, draft] of drafts.entries()) {
    const causationId = options.turn && index > 0 ? (events[0] as NewEvent).meta.id : run.lastEventId;
    events.push(
      newEvent(draft.type, draft.data as never, {
        // Another drive's decision at the same place has other ids: refused by its sequence, never taken for
        // a duplicate of this one (a wait for capacity in place of a thought, say).
        id: ids[index] as string,
        runId,
        ts: options.ts,
        correlationId: state.correlationId ?? runId,
        ...(causationId ? { causationId } : {}),
        // The span that made this decision: whoever acts on the event continues the run's trace from it.
        ...(options.trace ? { trace: options.trace } : {}),
      }),
    );
  }
  return events;
}

/** A wait for a slot (concurrent calls, a concurrency key) ends when one is freed; a rate ticket's never early. */
function isSlotWait(reason: string | undefined): boolean {
  return (
    reason !== undefined && (reason.endsWith('(concurrent calls)') || reason.includes('concurrency key'))
  );
}
