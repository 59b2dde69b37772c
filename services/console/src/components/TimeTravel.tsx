import type { RunEvent } from '@dura/contracts';
import { useStateAt } from '../api/queries';
import { eventLabel } from '../model/event-numbers';

/** The calls listed at the travelled-to event: the latest ones; the full state below holds them all. */
const CALLS_SHOWN = 50;

/**
 * Time travel: pick any event (slider or step picker) and see the state the agent saw right after it,
 * folded by the projector with the same `evolve` every service uses (`GET /runs/:id/state?at=`).
 */
export function TimeTravel({
  runId,
  events,
  selected,
  onSelect,
  numberOf,
}: {
  runId: string;
  events: RunEvent[];
  selected: number | undefined;
  onSelect: (seq: number) => void;
  numberOf: (seq: number) => number | undefined;
}) {
  const at = selected ?? events.at(-1)?.seq;
  const index = Math.max(
    0,
    events.findIndex((e) => e.seq === at),
  );
  const state = useStateAt(runId, at);
  const view = state.data?.state;
  if (events.length === 0) return null;
  return (
    <section className="time-travel" aria-label="Time travel" data-testid="time-travel">
      <h2>Time travel</h2>
      <div className="tt-controls">
        <button
          type="button"
          aria-label="Previous event"
          onClick={() => onSelect(events[Math.max(0, index - 1)]?.seq ?? 1)}
        >
          ◀
        </button>
        <input
          type="range"
          min={0}
          max={events.length - 1}
          value={index}
          aria-label="Event to travel to"
          aria-valuetext={`event ${at ?? ''}`}
          onChange={(e) => {
            const event = events[Number(e.target.value)];
            if (event) onSelect(event.seq);
          }}
        />
        <button
          type="button"
          aria-label="Next event"
          onClick={() => onSelect(events[Math.min(events.length - 1, index + 1)]?.seq ?? 1)}
        >
          ▶
        </button>
        {/* A number, not a list: a list of a 10,000-event run's events is 10,000 elements to lay out. */}
        <label className="step-picker">
          event #
          <input
            type="number"
            aria-label="Step picker"
            data-testid="step-picker"
            min={1}
            max={events.length}
            value={index + 1}
            onChange={(e) => {
              const event = events[Number(e.target.value) - 1];
              if (event) onSelect(event.seq);
            }}
          />
          of {events.length}
        </label>
      </div>
      {state.error && <p className="error">{state.error.message}</p>}
      {view && (
        <div className="tt-state">
          <p data-testid="tt-status">
            at {state.data ? eventLabel(numberOf, state.data.at) : ''}: <code>status: {view.status}</code>
          </p>
          <ul>
            <li>
              steps {view.steps}, decisions {view.decisions}
            </li>
            <li>
              tokens {view.usage.inputTokens} in / {view.usage.outputTokens} out, cost $
              {view.budget.costUsd.toFixed(4)}
            </li>
            {view.waiting && (
              <li>
                waiting for {view.waiting.kind}
                {view.waiting.signal ? ` "${view.waiting.signal}"` : ''}
                {view.waiting.callId ? ` (call ${view.waiting.callId})` : ''}
              </li>
            )}
            {view.calls.length > CALLS_SHOWN && (
              <li className="muted">
                {view.calls.length - CALLS_SHOWN} earlier calls (in the full state below)
              </li>
            )}
            {view.calls.slice(-CALLS_SHOWN).map((call) => (
              <li key={call.callId}>
                {call.callId}: {call.tool} {call.status}
                {call.approval?.decision
                  ? ` (${call.approval.decision})`
                  : call.approval
                    ? ' (awaiting approval)'
                    : ''}
              </li>
            ))}
          </ul>
          <details>
            <summary>Full state</summary>
            <pre className="json">{JSON.stringify(view, null, 2)}</pre>
          </details>
        </div>
      )}
    </section>
  );
}
