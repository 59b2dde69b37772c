// Helpers of telemetry.e2e.spec.ts: reading a run's trace off the OTLP receiver and its planner's metrics.
import type { RunEvent } from '@dura/contracts';
import type { ReceivedSpan } from '@dura/testing';

/** The span itself, then its parent, and so on up to the root (as far as the receiver has them). */
export function ancestry(span: ReceivedSpan, byId: Map<string, ReceivedSpan>): ReceivedSpan[] {
  const chain = [span];
  for (let at = byId.get(span.parentSpanId ?? ''); at; at = byId.get(at.parentSpanId ?? '')) chain.push(at);
  return chain;
}

/** A trace id out of the event's `meta.trace` (`00-<trace id>-<span id>-<flags>`). */
export const traceIdIn = (event: RunEvent | undefined) => event?.meta.trace?.split('-')[1];

/** Where a predicate on the receiver's spans stands, for a failure message that says what is missing. */
export function describeTrace(spans: ReceivedSpan[]): string {
  return spans.map((s) => `${s.service ?? '?'}/${s.name}${s.parentSpanId ? '' : ' (root)'}`).join(', ');
}

/** The `recorded` count of the decision histogram in a Prometheus scrape, summed over its series. */
export async function decisionsRecorded(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return text
    .split('\n')
    .filter(
      (line) =>
        line.startsWith('dura_decision_duration_seconds_count') && line.includes('outcome="recorded"'),
    )
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}
