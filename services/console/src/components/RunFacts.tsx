import type { z } from 'zod';
import type { RunEvent, RunStateSummarySchema } from '@dura/contracts';
import { fullTime, shortDuration } from '../model/format';

type RunStateSummary = z.infer<typeof RunStateSummarySchema>;

const ENDS = new Set<RunEvent['type']>(['run_completed', 'run_failed', 'run_cancelled', 'run_rejected']);
const PREVIEW = 80;

/** A JSON value one click from in full: a one-line preview, the whole value (wrapped, never clipped) below. */
export function Value({ name, value, testId }: { name: string; value: unknown; testId: string }) {
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  const line = JSON.stringify(value) ?? 'undefined';
  return (
    <details className="value" data-testid={testId}>
      <summary>
        <strong>{name}</strong> <code>{line.length > PREVIEW ? `${line.slice(0, PREVIEW)}…` : line}</code>
      </summary>
      <pre className="json">{text}</pre>
    </details>
  );
}

const FINISHED = new Set<RunStateSummary['status']>(['completed', 'failed', 'cancelled', 'rejected']);

/**
 * What a run was asked and what it gave, and when: its input, its output or its error (with a rejection's
 * issues), when it started and ended, and how long it took (so far, while it runs). While only the run's first
 * events are read (`complete: false`), a finished run's end and duration wait for the rest.
 */
export function RunFacts({
  run,
  events,
  complete,
}: {
  run: RunStateSummary;
  events: readonly RunEvent[];
  complete: boolean;
}) {
  const first = events[0];
  const end = events.find((event) => ENDS.has(event.type));
  const endUnread = !end && !complete && FINISHED.has(run.status);
  const rejection = events.find((event) => event.type === 'run_rejected');
  const issues = rejection?.type === 'run_rejected' ? (rejection.data.issues ?? []) : [];
  const startedMs = first ? Date.parse(first.meta.ts) : undefined;
  const endedMs = end ? Date.parse(end.meta.ts) : undefined;
  return (
    <div className="run-facts" data-testid="run-facts">
      <p className="times">
        {first && (
          <span data-testid="run-started">
            Started {fullTime(first.meta.ts)}
            {' · '}
          </span>
        )}
        {end && (
          <span data-testid="run-ended">
            Ended {fullTime(end.meta.ts)}
            {' · '}
          </span>
        )}
        {startedMs !== undefined && !endUnread && (
          <span data-testid="run-duration">
            {endedMs !== undefined
              ? `took ${shortDuration(endedMs - startedMs)}`
              : `running for ${shortDuration(Date.now() - startedMs)}`}
          </span>
        )}
      </p>
      {run.request && <Value name="Input" value={run.request.input ?? null} testId="run-input" />}
      {run.status === 'completed' && <Value name="Output" value={run.output ?? null} testId="run-output" />}
      {run.error && (
        <div className="error-box" role="alert" data-testid="run-error">
          <strong>{run.status === 'rejected' ? 'Rejected' : 'Failed'}:</strong> {run.error.code}:{' '}
          {run.error.message}
          {issues.length > 0 && (
            <ul data-testid="run-issues">
              {issues.map((issue) => (
                <li key={issue}>{issue}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
