import type { JetStreamClient } from '@nats-io/jetstream';
import { newEvent, SUBJECTS, TASK_VERSION, type DecideTask, type JsonValue } from '@dura/contracts';
import type { EventStore } from '@dura/event-store';
import { injectContext, traceparentOf } from '@dura/telemetry';

export interface ChildOutcome {
  childRunId: string;
  status: 'completed' | 'failed' | 'cancelled';
  output?: JsonValue;
  correlationId: string;
  /** The child's event the report follows (`<childRunId>@<seq>`). */
  causationId: string;
}

/**
 * Tells a parent run its child ended: `child_run_completed` on the parent's log (its id names the child, so
 * a repeated report is dropped as a duplicate) and a decide task that moves the parent on.
 */
export async function reportToParent(
  deps: { store: EventStore; js: JetStreamClient; clock: () => Date },
  parentRunId: string,
  outcome: ChildOutcome,
): Promise<void> {
  const { childRunId, status, output } = outcome;
  // The child's drive, in the parent's trace (the child was submitted from it): the parent goes on in it.
  const trace = traceparentOf();
  const event = newEvent(
    'child_run_completed',
    { childRunId, status, ...(output === undefined ? {} : { output }) },
    {
      id: `${parentRunId}:child:${childRunId}`,
      runId: parentRunId,
      ts: deps.clock().toISOString(),
      correlationId: outcome.correlationId,
      causationId: outcome.causationId,
      ...(trace ? { trace } : {}),
    },
  );
  const result = await deps.store.append(parentRunId, [event], { expectedSeq: 'any' });
  const task: DecideTask = { v: TASK_VERSION, runId: parentRunId, afterSeq: result.lastSeq, reason: 'child' };
  await deps.js.publish(SUBJECTS.decideTask, JSON.stringify(task), {
    msgID: `${parentRunId}@${result.lastSeq}`,
    headers: injectContext(),
  });
}
