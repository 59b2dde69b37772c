import {
  newEvent,
  type ErrorInfo,
  type JsonValue,
  type NewEvent,
  type PayloadRef,
  type ToolTask,
} from '@dura/contracts';

/** The observation of a call's final outcome always has this id, so every path that records it agrees. */
export function resultEventId(idempotencyKey: string): string {
  return `${idempotencyKey}:result`;
}

function meta(task: ToolTask, id: string, now: Date): NewEvent['meta'] {
  return {
    id,
    runId: task.runId,
    ts: now.toISOString(),
    causationId: task.causationId,
    correlationId: task.correlationId,
    ...(task.trace ? { trace: task.trace } : {}),
  };
}

export function completedEvent(
  task: ToolTask,
  result: JsonValue,
  attempt: number,
  durationMs: number,
  now: Date,
  resultRef?: PayloadRef,
): NewEvent {
  return newEvent(
    'tool_call_completed',
    {
      callId: task.callId,
      idempotencyKey: task.idempotencyKey,
      result,
      ...(resultRef ? { resultRef } : {}),
      attempt,
      deduped: false,
      durationMs: Math.round(durationMs),
    },
    meta(task, resultEventId(task.idempotencyKey), now),
  );
}

/** A failed attempt. Retryable ones get a per-attempt id: each attempt is its own fact in the log. */
export function failedEvent(
  task: ToolTask,
  error: ErrorInfo,
  attempt: number,
  retryable: boolean,
  now: Date,
  failRun = false,
): NewEvent {
  const id = retryable ? `${task.idempotencyKey}:attempt-${attempt}` : resultEventId(task.idempotencyKey);
  return newEvent(
    'tool_call_failed',
    {
      callId: task.callId,
      idempotencyKey: task.idempotencyKey,
      error: { ...error, retryable },
      attempt,
      retryable,
      ...(failRun ? { failRun: true } : {}),
    },
    meta(task, id, now),
  );
}
