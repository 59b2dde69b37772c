import type { RunEvent } from '@dura/contracts';

/** The trace id of a W3C traceparent (`00-<trace id>-<span id>-<flags>`) on the event, if it carries one. */
export function traceIdOf(event: RunEvent | undefined): string | undefined {
  const match = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(event?.meta.trace ?? '');
  return match?.[1];
}

/** The tracing UI's link for the trace: the configured template with `{traceId}` filled in. */
export const traceLink = (template: string, traceId: string) => template.replaceAll('{traceId}', traceId);
