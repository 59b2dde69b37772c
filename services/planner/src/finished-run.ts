import type { JetStreamClient } from '@nats-io/jetstream';
import { SIGNAL_VERSION, SUBJECTS, type SignalRequest } from '@dura/contracts';
import { CANCEL_SIGNAL, cancelReasonOf, type RunState } from '@dura/core';
import type { EventStore } from '@dura/event-store';
import type { CodeRuns } from '@dura/agents';
import { failpoint } from '@dura/service-kit';
import type { Cancellations } from './cancellations';
import { reportToParent } from './parent-report';
import type { RunFlow } from './run-flow';

/**
 * Duties of a finished run, done on every drive that finds it finished (each is idempotent): the model lets
 * go of what it keeps for the run, flow control gets its slot back, a child reports to its parent, and a
 * cancelled run is marked for the gateways and cancels its running children.
 */
export function createFinishedRunDuties(deps: {
  store: EventStore;
  js: JetStreamClient;
  clock: () => Date;
  model: Partial<Pick<CodeRuns, 'finished'>>;
  flow?: RunFlow;
  cancellations?: Cancellations;
}): (state: RunState) => Promise<void> {
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

  return async function settleFinished(state: RunState): Promise<void> {
    const runId = state.runId as string;
    deps.model.finished?.(runId);
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
  };
}

function cancelReason(state: RunState): string {
  const signal = state.signals.find((s) => s.name === CANCEL_SIGNAL);
  return signal ? cancelReasonOf(signal) : 'cancelled';
}
