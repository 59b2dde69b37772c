import type { JsMsg } from '@nats-io/jetstream';
import { DuraError, newEvent, SignalRequestSchema, type SignalRequest, decodeOrThrow } from '@dura/contracts';
import { CANCEL_SIGNAL, cancelReasonOf, isTerminal } from '@dura/core';
import { retryOnConflict, type EventStore } from '@dura/event-store';
import type { Logger } from '@dura/service-kit';
import { traceparentOf } from '@dura/telemetry';
import type { Cancellations } from './cancellations';
import type { RunDriver } from './run-driver';

export interface SignalIntakeDeps {
  store: EventStore;
  driver: RunDriver;
  log: Logger;
  clock: () => Date;
  maxConflicts?: number;
  /** Where a recorded `cancel` is marked for the gateways, before the run's drive gets to it. */
  cancellations?: Cancellations;
}

/** The id of a signal's event: a redelivered or resubmitted signal (same `signalId`) is recorded once. */
export function signalEventId(runId: string, signalId: string): string {
  return `${runId}:signal:${signalId}`;
}

function parseSignal(msg: JsMsg): SignalRequest {
  return decodeOrThrow(msg.data, SignalRequestSchema, 'signal');
}

/**
 * Handles one message from `dura.signal`: records it on the run's log as `signal_received` (guarded by the
 * run's last sequence, like every planner append) and moves the run on. A signal for a run that does not
 * exist or has finished is refused with a typed error, which dead-letters it with the reason.
 *
 * A recorded `cancel` for a run whose drive is under way in this process is marked in the cancellations
 * bucket right away: that drive may be holding the run while a call runs in place (a worker), so the
 * signal's own drive, which records `run_cancelled` and marks the run, would wait for the call to end. The
 * mark is what aborts the call (the gateway's watcher). It follows the log, never leads it: a recorded
 * `cancel` ends a live run before anything else (`nextAction`), so the run is cancelled from that event on.
 */
export function createSignalIntake(deps: SignalIntakeDeps) {
  const maxConflicts = deps.maxConflicts ?? 20;

  return async function handleSignal(msg: JsMsg): Promise<void> {
    const signal = parseSignal(msg);
    const { runId } = signal;
    // The span handling the signal, in the run's trace (see `signalTrace`): its event continues it.
    const trace = traceparentOf();
    await retryOnConflict(
      async () => {
        const { state, lastEventId } = await deps.driver.load(runId);
        if (state.status === 'none') {
          throw new DuraError(
            'run_not_found',
            `signal ${signal.name} names run ${runId}, which does not exist`,
          );
        }
        if (state.status === 'pending') {
          // Requested but not started yet: the lifecycle takes signals only once the run runs, so the signal
          // waits (redelivered shortly) instead of being appended where the fold would refuse it.
          throw new DuraError(
            'run_not_started',
            `run ${runId} has not started yet; signal ${signal.name} will be retried`,
            {
              retryable: true,
            },
          );
        }
        if (state.signals.some((s) => s.signalId === signal.signalId)) return;
        if (isTerminal(state.status)) {
          throw new DuraError(
            'run_finished',
            `run ${runId} is ${state.status}; signal ${signal.name} was not delivered`,
          );
        }
        const event = newEvent(
          'signal_received',
          {
            signalId: signal.signalId,
            name: signal.name,
            ...(signal.payload === undefined ? {} : { payload: signal.payload }),
          },
          {
            id: signalEventId(runId, signal.signalId),
            runId,
            ts: deps.clock().toISOString(),
            correlationId: state.correlationId ?? runId,
            ...(lastEventId ? { causationId: lastEventId } : {}),
            ...(trace ? { trace } : {}),
          },
        );
        await deps.store.append(runId, [event], { expectedSeq: state.lastSeq });
        deps.log.info('signal recorded', { runId, name: signal.name, signalId: signal.signalId });
      },
      { maxConflicts },
    );
    // Here the signal is in the log (recorded now or by an earlier delivery).
    if (signal.name === CANCEL_SIGNAL && deps.driver.driving(runId))
      await deps.cancellations?.mark(runId, cancelReasonOf(signal));
    await deps.driver.drive(runId);
  };
}

/**
 * The trace a signal continues: the `meta.trace` of its run's last event (the wait that asked for it, as a
 * rule), so the run stays one trace whoever sent the signal and whenever. Undefined for a run with no log.
 */
export function createSignalTrace(deps: Pick<SignalIntakeDeps, 'store' | 'driver'>) {
  return async function signalTrace(msg: JsMsg): Promise<string | undefined> {
    const { runId } = parseSignal(msg);
    const run = await deps.driver.load(runId);
    if (run.state.status === 'none') return undefined;
    // Held with the run as folded; read from the log only for a run resumed from a snapshot at its last event.
    return run.lastTrace ?? (await deps.store.readAt(runId, run.state.lastSeq))?.meta.trace;
  };
}
