import type { JetStreamClient } from '@nats-io/jetstream';
import type { ErrorInfo, RunRequest } from '@dura/contracts';
import { canonicalJson } from '@dura/core';
import type { EventStore } from '@dura/event-store';
import { reportToParent } from './parent-report';
import type { RunDriver } from './run-driver';

/** A request that names no parent; a child its parent's log asked for; or one claiming a parent that did not. */
export type ChildCheck =
  | { kind: 'root' }
  | { kind: 'child'; reportRejected(): Promise<void> }
  | { kind: 'forged'; error: ErrorInfo };

export const FORGED_CHILD_CODE = 'forged_child';

/**
 * Child runs are exempt from tenant limits and report to their parent, so `parent` is a claim the intake
 * checks: the parent's log must hold `child_run_requested` for exactly this request (same id, agent, input
 * and tenant). A verified child that is refused fails its parent's call, so the parent never waits on it.
 */
export async function checkChildRequest(
  deps: { store: EventStore; js: JetStreamClient; driver: RunDriver; clock: () => Date },
  request: RunRequest & { runId: string },
): Promise<ChildCheck> {
  const parent = request.parent;
  if (!parent) return { kind: 'root' };
  const { state } = await deps.driver.load(parent.runId);
  const asked = state.children.find((child) => child.childRunId === request.runId);
  if (!asked || asked.callId !== parent.callId || canonicalJson(asked.request) !== canonicalJson(request)) {
    return {
      kind: 'forged',
      error: {
        code: FORGED_CHILD_CODE,
        message: `run ${request.runId} names parent run ${parent.runId} (call ${parent.callId}), which did not ask for it; child runs are started by the parent's dura.run_agent call, so submit this run without "parent"`,
      },
    };
  }
  return {
    kind: 'child',
    reportRejected: () =>
      reportToParent(deps, parent.runId, {
        childRunId: request.runId,
        status: 'failed',
        correlationId: state.correlationId ?? parent.runId,
        causationId: `${request.runId}@0`,
      }),
  };
}
