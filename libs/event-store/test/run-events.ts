import { newEvent, type EventData, type EventType, type NewEvent } from '@dura/contracts';
import { requestedData, thoughtData } from '@dura/core/testing';

const EPOCH = Date.UTC(2025, 0, 1);

/** Builds a run's events with unique, deterministic `meta.id`s (the msg-id JetStream dedupes on). */
export function runEvents(runId: string) {
  let n = 0;
  const make = <T extends EventType>(type: T, data: EventData<T>): NewEvent => {
    n += 1;
    return newEvent(type, data, {
      id: `${runId}:${n}`,
      runId,
      ts: new Date(EPOCH + n * 1000).toISOString(),
      correlationId: runId,
      ...(n > 1 ? { causationId: `${runId}:${n - 1}` } : {}),
    });
  };
  return {
    make,
    requested: () => make('run_requested', requestedData(runId, [{ tool: 'echo', args: { n: 1 } }])),
    started: () => make('run_started', {}),
    thought: (step = 0) => make('thought', thoughtData({ kind: 'complete', output: `step ${step}` }, step)),
    completed: () => make('run_completed', { output: 'done' }),
  };
}
