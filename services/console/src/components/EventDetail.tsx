import type { RunEvent } from '@dura/contracts';
import { useCauses } from '../api/queries';
import { eventLabel } from '../model/event-numbers';
import { useRunPage } from './run-page-context';

/** One event's data and meta, and the chain of events that caused it back to the run's request. */
export function EventDetail({ event }: { event: RunEvent }) {
  const { runId, numberOf, onSelect } = useRunPage();
  const causes = useCauses(runId, event.seq);
  return (
    <aside className="detail" aria-label={`Event ${event.seq}`} data-testid="event-detail">
      <h2>
        {eventLabel(numberOf, event.seq)} {event.type}
      </h2>
      <p className="muted">{event.meta.ts}</p>
      <pre className="json">{JSON.stringify(event.data, null, 2)}</pre>
      <h3>Caused by</h3>
      {causes.error && <p className="error">{causes.error.message}</p>}
      <ol className="causes" data-testid="causes">
        {causes.data?.chain.map((cause) => (
          <li key={cause.seq}>
            <button type="button" className="linkish" onClick={() => onSelect(cause.seq)}>
              {eventLabel(numberOf, cause.seq)} {cause.type}
            </button>
          </li>
        ))}
      </ol>
      <details>
        <summary>meta</summary>
        <pre className="json">{JSON.stringify(event.meta, null, 2)}</pre>
      </details>
    </aside>
  );
}
