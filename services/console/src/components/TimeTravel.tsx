import type { z } from 'zod';
import type { RunEvent, RunStateSchema } from '@dura/contracts';
import { useState } from 'react';
import { useStateAt } from '../api/queries';
import { eventLabel, travelPosition } from '../model/event-numbers';
import { limitsPath } from '../model/router';
import { Link } from './Link';
import { useRunPage } from './run-page-context';

/** The calls listed at the travelled-to event: the latest ones; the full state below holds them all. */
const CALLS_SHOWN = 50;

/**
 * Time travel: pick any event (slider or step picker) and see the state the agent saw right after it,
 * folded by the projector with the same `evolve` every service uses (`GET /runs/:id/state?at=`). After the
 * run's last event that state is the run's own (`run`): the page shows it without asking for a fold. While the
 * events are read (`complete: false`, `count` of them in all) it stands there, and moves once they are in.
 */
export function TimeTravel({
  run,
  events,
  count,
  complete,
}: {
  run: z.infer<typeof RunStateSchema> | undefined;
  events: RunEvent[];
  count: number;
  complete: boolean;
}) {
  const { runId, numberOf, selected, onSelect } = useRunPage();
  // Unselected, it stands at the run's last event (a fold is asked for only once the run's state is in).
  const { at, index } = travelPosition(events, count, complete, selected, run?.lastSeq);
  const current = run !== undefined && at === run.lastSeq;
  const state = useStateAt(runId, current ? undefined : at);
  const view = current ? run : state.data?.state;
  const viewAt = current ? run.lastSeq : state.data?.at;
  if (events.length === 0) return null;
  return (
    <section className="time-travel" aria-label="Time travel" data-testid="time-travel">
      <h2>Time travel</h2>
      <div className="tt-controls">
        <button
          type="button"
          aria-label="Previous event"
          disabled={!complete}
          onClick={() => onSelect(events[Math.max(0, index - 1)]?.seq ?? 1)}
        >
          ◀
        </button>
        <input
          type="range"
          min={0}
          max={count - 1}
          value={index}
          disabled={!complete}
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
          disabled={!complete}
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
            max={count}
            value={index + 1}
            disabled={!complete}
            onChange={(e) => {
              const event = events[Number(e.target.value) - 1];
              if (event) onSelect(event.seq);
            }}
          />
          of {count}
        </label>
      </div>
      {!current && state.error && <p className="error">{state.error.message}</p>}
      {view && (
        <div className="tt-state">
          <p data-testid="tt-status">
            at {viewAt === undefined ? '' : current && !complete ? `#${count}` : eventLabel(numberOf, viewAt)}
            : <code>status: {view.status}</code>
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
                {view.waiting.reason?.startsWith('capacity of ') ? (
                  <>
                    {', for '}
                    <Link to={limitsPath}>{view.waiting.reason}</Link>
                  </>
                ) : view.waiting.reason ? (
                  `: ${view.waiting.reason}`
                ) : (
                  ''
                )}
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
          <FullState state={view} />
        </div>
      )}
    </section>
  );
}

/**
 * The whole state as JSON, written out only once opened: a long run's state is megabytes of text, which the
 * page would otherwise build on every travel.
 */
function FullState({ state }: { state: unknown }) {
  const [open, setOpen] = useState(false);
  return (
    <details onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>Full state</summary>
      {open && <pre className="json">{JSON.stringify(state, null, 2)}</pre>}
    </details>
  );
}
