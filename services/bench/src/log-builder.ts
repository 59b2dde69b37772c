// Logs written straight onto the runs stream, fast (async publishes in batches, no expected sequence): the
// histories that resume, idle and projector scenarios start from. Shapes come from @dura/core's RunLog.
import type { JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { runSubject, type RunEvent } from '@dura/contracts';
import { RunLog } from '@dura/core/testing';
import { EVENT_TYPE_HEADER } from '@dura/event-store';

const encoder = new TextEncoder();
const BATCH = 1000;

/** Publishes `events` in order of batches; within a batch the acks are awaited together. */
export async function publishEvents(
  js: JetStreamClient,
  events: Iterable<RunEvent>,
  onBatch?: (published: number) => void,
): Promise<number> {
  let pending: Promise<unknown>[] = [];
  let published = 0;
  const flush = async () => {
    await Promise.all(pending);
    published += pending.length;
    pending = [];
    onBatch?.(published);
  };
  for (const event of events) {
    const { seq: _seq, ...stored } = event;
    const headers = natsHeaders();
    headers.set(EVENT_TYPE_HEADER, event.type);
    pending.push(
      js.publish(runSubject(event.meta.runId), encoder.encode(JSON.stringify(stored)), {
        msgID: event.meta.id,
        headers,
      }),
    );
    if (pending.length >= BATCH) await flush();
  }
  if (pending.length > 0) await flush();
  return published;
}

/** A run of `steps` completed echo calls out of a plan of `planSteps`, left where the model decides next. */
export function openRunLog(runId: string, steps: number, planSteps = steps + 1): RunLog {
  const plan = Array.from({ length: planSteps }, (_, i) => ({ tool: 'echo', args: { step: i + 1 } }));
  const log = new RunLog(runId).request(plan).start();
  for (let i = 0; i < steps; i += 1) {
    log.think([{ tool: 'echo', args: { step: i + 1 } }]).intents();
    const intent = log.events.at(-1);
    if (intent?.type !== 'tool_call_requested') throw new Error('RunLog did not record an intent');
    log.complete(intent.data.callId, { step: i + 1 });
  }
  return log;
}

/** Events in a log of `steps` calls: request, start and three per step. */
export const eventsForSteps = (steps: number): number => 2 + 3 * steps;

/** A finished run of `steps` echo calls (2 + 3·steps + 2 events). */
export function finishedRunLog(runId: string, steps: number): RunLog {
  return openRunLog(runId, steps, steps).finish({ step: steps });
}

/** A run suspended on a signal that never comes: requested, started, waiting. */
export function suspendedRunLog(runId: string): RunLog {
  return new RunLog(runId)
    .request([{ tool: 'echo', args: { step: 1 } }])
    .start()
    .add('wait_requested', { waitId: `${runId}:wait`, kind: 'signal', signal: 'go' });
}
