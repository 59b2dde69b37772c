import type { RunEvent } from '@dura/contracts';

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The run's trace id: from the W3C traceparent (`00-<trace id>-<span id>-<flags>`) of its first event that
 * carries one (a request submitted without a trace gets one where the planner first handles it).
 */
export function traceIdOf(events: readonly RunEvent[]): string | undefined {
  for (const event of events) {
    const match = TRACEPARENT.exec(event.meta.trace ?? '');
    if (match?.[1]) return match[1];
  }
  return undefined;
}

/** The tracing UI's link for the trace: the configured template with `{traceId}` filled in. */
export const traceLink = (template: string, traceId: string) => template.replaceAll('{traceId}', traceId);
