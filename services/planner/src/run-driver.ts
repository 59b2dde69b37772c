import type { JetStreamClient } from '@nats-io/jetstream';
import { DuraError } from '@dura/contracts';
import { isTerminal, nextAction, type RunState } from '@dura/core';
import { retryOnConflict, type EventStore } from '@dura/event-store';
import { duraMeter, duraTracer, failpoint, type Logger } from '@dura/service-kit';
import { DURA_ATTRS, DURA_METRICS, DURA_SPAN_EVENTS, declareCounter } from '@dura/telemetry';
import { context as otelContext, trace } from '@opentelemetry/api';
import {
  plannerStep,
  type AdmitInput,
  type CallAdmission,
  type ModelTurn,
  type PlannerModel,
} from '@dura/agents';
import type { Cancellations } from './cancellations';
import { capacityWaitOf } from './capacity-waits';
import { createDecisionSpans, type Decision } from './decision-span';
import { createFinishedRunDuties } from './finished-run';
import { createInPlaceCalls, type LocalTools } from './in-place-calls';
import { liveTextFor } from './live-text';
import { createModelCall } from './model-call';
import { unlessSuperseded } from './superseded-watch';
import type { Parking } from './parking';
import { parkedElsewhere } from './pinned-elsewhere';
import { createRunAppender } from './run-appender';
import type { RunFlow } from './run-flow';
import { createRunLoader, staleRead, type SnapshotOptions } from './run-loading';
import type { CachedRun } from './run-state-cache';
import { createRunTurns } from './run-turns';
import type { Speculation } from './speculation';
import { recordStep, type StepContext } from './step-recorder';
import { createTaskDispatch } from './task-dispatch';
import { createTimerDue } from './timer-due';

export { DEFAULT_SNAPSHOT_EVERY, type SnapshotOptions } from './run-loading';
export type { LocalTools } from './in-place-calls';

export interface RunDriverDeps {
  store: EventStore;
  js: JetStreamClient;
  model: PlannerModel;
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
   * Tools whose calls the drive runs itself instead of sending tool tasks, going on with their observations:
   * in place (a worker: planner and gateway in one process), or handed straight to a gateway (direct calls).
   */
  localTools?: LocalTools;
  /** Model limits and concurrency keys: asked before each model call; told when a run ends. */
  flow?: RunFlow;
}

export interface DriveOptions {
  /** W3C traceparent the appended events carry. */
  trace?: string;
  /**
   * A sequence the run's log is known to hold (the event a decide task is about): the catch-up read of a
   * cached run stops there, and a message get beside it asks the stream leader whether the log went on past
   * it (a task redelivered after another replica drove the run on): then that is read too, so a model is
   * never asked on a state the log has left. A later event of any kind also makes the next guarded append
   * fail and re-read, so nothing is missed.
   */
  afterSeq?: number;
  /**
   * The caller has just written the run's log up to `afterSeq` itself (the intake's first append): the drive
   * starts from the cached fold without asking whether anything followed.
   */
  current?: boolean;
  /**
   * Capacity the run may be waiting for came free: its open wait for capacity is to end now, by its timer
   * firing now (see `capacityWaitOf`); the drive does nothing else.
   */
  wake?: boolean;
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
 *
 * This file is the drive loop and the wiring of its parts: loading and caching runs (`run-loading`), the
 * appender (`run-appender`, `step-recorder`), task dispatch, in-place calls and speculation, the model call
 * and its span, a finished run's duties, runs of other versions, capacity waits and turn-taking.
 */
export function createRunDriver(deps: RunDriverDeps) {
  const tracer = duraTracer();
  const conflictsLost = declareCounter(duraMeter(), DURA_METRICS.conflictsLost);
  const maxConflicts = deps.maxConflicts ?? 20;
  const turns = createRunTurns();
  const runs = createRunLoader(deps);
  const appender = createRunAppender({ ...deps, runs, drives: turns.size });
  const tasks = createTaskDispatch({ js: deps.js, tracer, timerDue: createTimerDue(deps.store) });
  const inPlace = createInPlaceCalls({ js: deps.js, runs, drives: turns.size });
  const startDecision = createDecisionSpans(tracer);
  const callModel = createModelCall({ ...deps, tracer });
  const settleFinished = createFinishedRunDuties(deps);

  /** Drives of one run take turns in this process (see `RunTurns`); across replicas, the guarded append decides. */
  function drive(runId: string, options: DriveOptions = {}): Promise<DriveOutcome> {
    return turns.take(runId, () => driveNow(runId, options));
  }

  async function driveNow(runId: string, options: DriveOptions): Promise<DriveOutcome> {
    // A decision's span stays open until the drive's next decision starts (or the drive ends): the intents
    // it records and the tool calls they dispatch (or run in place) hang under it.
    let decision: Decision | undefined;
    const inDecision = <T>(fn: () => Promise<T>): Promise<T> =>
      decision ? otelContext.with(decision.ctx, fn) : fn();
    const stepContext: StepContext = {
      inDecision,
      decided: () => decision?.recorded(),
      trace: options.trace,
    };
    // Counted across lost races: a model call is made once per decision, whoever records it.
    let modelCalls = 0;
    let dispatched = 0;
    let through = options.afterSeq;
    let current = options.current === true;
    const wake = options.wake === true;
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
        const landed = await inPlace.afterLanding(guessed);
        if ('known' in landed) known = landed.known;
        else through = landed.through;
        ownAfter = undefined;
      }
      for (;;) {
        const run = known ?? (await runs.load(runId, through, current));
        const recordedAfter = known === undefined ? undefined : ownAfter;
        const guessed = known === undefined ? undefined : speculation;
        known = undefined;
        ownAfter = undefined;
        speculation = undefined;
        if (through !== undefined && run.state.lastSeq < through)
          throw staleRead(deps.log, runId, run.state.lastSeq, through);
        // Only the first read may stop at the hint; after a lost race the whole tail is read.
        through = undefined;
        current = false;
        const action = nextAction(run.state);
        if (guessed && action.kind !== 'decide') {
          // Only a model turn goes out on the guess; anything else waits for the observation to land.
          await goOnFromLanded(guessed);
          continue;
        }
        if (action.kind !== 'idle' && (await parkedElsewhere(deps, run.state)))
          return { state: run.state, modelCalls, dispatched };
        if (wake) {
          // A wake drives nothing itself: two drives of one decision would each ask for the model.
          const waiting = capacityWaitOf(run.state);
          if (waiting) await tasks.wakeTimer(run, waiting);
          return { state: run.state, modelCalls, dispatched };
        }
        switch (action.kind) {
          case 'idle':
            if (action.reason === 'finished' && isTerminal(run.state.status)) await settleFinished(run.state);
            return { state: run.state, modelCalls, dispatched };
          case 'dispatch': {
            const local = deps.localTools;
            const runsHere = local ? action.calls.filter((call) => local.runs(call.tool)) : [];
            const sent =
              runsHere.length === 0 ? action.calls : action.calls.filter((c) => !runsHere.includes(c));
            await inDecision(() =>
              Promise.all([tasks.tools(run, sent), tasks.waits(run, action.timers, action.children)]),
            );
            dispatched += action.calls.length;
            if (!local || runsHere.length === 0) return { state: run.state, modelCalls, dispatched };
            const observed = await inDecision(() => inPlace.run(local, run, runsHere, recordedAfter));
            if ('handedOff' in observed) return { state: run.state, modelCalls, dispatched };
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
              watched: (state, step) => unlessSuperseded(deps.store, runId, state.lastSeq, step),
              ...(deps.flow
                ? {
                    admit: (input) => admitted(deps.flow as RunFlow, input),
                    hold: (input) => (deps.flow as RunFlow).hold(input),
                  }
                : {}),
              live: liveTextFor(deps, runId, run.state.decisions),
              ...(deps.sealDecision ? { seal: deps.sealDecision } : {}),
            });
            if (step.kind === 'thought') modelCalls += 1;
            known = await recordStep(appender, stepContext, run, step, guessed);
            ownAfter = run.state.lastSeq;
            // Nothing recorded behind the guess: go on from where the observation landed.
            if (known === undefined && guessed) await goOnFromLanded(guessed);
            break;
          }
        }
      }
    }
  }

  return {
    drive,
    load: runs.load,
    flushSnapshots: runs.flushSnapshots,
    /** Whether a drive of the run is under way in this process (a worker's drive holds the run while a call runs in place). */
    driving: turns.has,
    adopt: runs.adopt,
  };
}

export type RunDriver = ReturnType<typeof createRunDriver>;

/** Flow control's answer, with the crash point between a call's admission and the call (fault tests). */
async function admitted(flow: RunFlow, input: AdmitInput): Promise<CallAdmission> {
  const admission = await flow.admit(input);
  if (admission.kind === 'go') failpoint('planner.after-admit');
  return admission;
}
