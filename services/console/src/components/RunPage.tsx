import { useEffect, useMemo, useState } from 'react';
import type { ConsoleSession } from '@dura/contracts';
import { ApiError } from '../api/http';
import { useLiveText, useRunEvents, useRunState } from '../api/queries';
import { buildWaterfall } from '../model/waterfall';
import { buildConversations } from '../model/conversation';
import { eventNumbers } from '../model/event-numbers';
import { pageTitle } from '../model/format';
import { traceIdOf, traceLink } from '../model/trace';
import { listPath, runPath } from '../model/router';
import { Actions } from './Actions';
import { ConversationView, ViewTabs, type RunView } from './Conversation';
import { EventDetail } from './EventDetail';
import { ForkWithEdits } from './ForkEditor';
import { ForkOrigin } from './ForkOrigin';
import { Gauges } from './Gauges';
import { RunFacts } from './RunFacts';
import { Link } from './Link';
import { RunPageContext } from './run-page-context';
import { StatusBadge } from './StatusBadge';
import { TimeTravel } from './TimeTravel';
import { Timeline } from './Timeline';

/**
 * One run: its status, budgets and error, what may be done to it, its waterfall (or, when it talked to a
 * model, its conversation), time travel and live tokens.
 */
export function RunPage({ runId, session }: { runId: string; session: ConsoleSession }) {
  const state = useRunState(runId);
  const notProjected = state.error instanceof ApiError && state.error.status === 404;
  // While the run's events are read, the page shows the first ones (its first screen): what needs them all
  // (the conversation, the end and duration) waits for the rest, which is read once the first screen is drawn
  // with the run's state (or its absence) beside it.
  const { events, complete, error: eventsError } = useRunEvents(runId, state.isPending);
  const rows = useMemo(() => buildWaterfall(events, { complete }), [events, complete]);
  const numberOf = useMemo(() => eventNumbers(events), [events]);
  const conversations = useMemo(() => (complete ? buildConversations(events) : []), [events, complete]);
  const [view, setView] = useState<RunView>('events');
  const [selected, setSelected] = useState<number | undefined>();
  const cursor = useMemo(
    () => ({ runId, numberOf, selected, onSelect: setSelected }),
    [runId, numberOf, selected],
  );
  // The state without its calls comes first (the header, budgets and actions need no more); time travel and
  // an approval's call read the full state, which follows once the first screen is drawn.
  const run = state.data;
  const live = run !== undefined && ['pending', 'running', 'waiting'].includes(run.status);
  // The streamed answer is shown until its thought is in the log (the stream then says it is recorded). Its
  // stream is followed while the state says the run is live, or while the run is not projected yet (just
  // submitted or forked); not while the state is being read: a finished run's stream replays every recorded
  // answer, and a live run's replays from its first word whenever it is joined.
  const answering = useLiveText(runId, run === undefined ? notProjected : live);
  const traceId = useMemo(() => traceIdOf(events), [events]);
  // While the run is live, open spans reach "now" (read when the state or events change, not every frame).
  const first = events[0];
  const nowMs = useMemo(
    () => (live && first ? Date.now() - Date.parse(first.meta.ts) : undefined),
    [live, first, run?.lastSeq],
  );
  useEffect(() => {
    document.title = pageTitle(run ? `${runId} (${run.status})` : runId);
  }, [runId, run?.status]);
  const selectedEvent = useMemo(() => events.find((e) => e.seq === selected), [events, selected]);
  // How many events the run has (its state says, while they are read) and the span they cover.
  const count = complete ? events.length : Math.max(events.length, run?.eventCount ?? 0);
  const spanMs =
    !complete && first && run?.updatedAt ? Date.parse(run.updatedAt) - Date.parse(first.meta.ts) : undefined;
  if (state.error && !run)
    return (
      <p
        className={state.error instanceof ApiError && state.error.status === 404 ? 'muted' : 'error'}
        role="status"
      >
        {state.error instanceof ApiError && state.error.status === 404
          ? `Run ${runId} is not in the projection yet; this page shows it as soon as it is.`
          : state.error.message}
      </p>
    );
  return (
    <section className="run" aria-label={`Run ${runId}`}>
      <nav className="crumbs">
        <Link to={listPath()}>Runs</Link> / <span className="mono">{runId}</span>
      </nav>
      <div className="run-head">
        <h1 className="mono" data-testid="run-id">
          {runId}
        </h1>
        {run && <StatusBadge status={run.status} />}
        {run?.request?.agent.kind === 'agent' && (
          <span>
            {run.request.agent.name}@{run.pinned?.version ?? run.request.agent.version ?? 'latest'}
          </span>
        )}
        {run?.request?.parent && (
          <span>
            child of <Link to={runPath(run.request.parent.runId)}>{run.request.parent.runId}</Link>
          </span>
        )}
        {traceId && (
          <span className="trace" data-testid="trace">
            trace{' '}
            {session.tracesUrl ? (
              <a href={traceLink(session.tracesUrl, traceId)} target="_blank" rel="noreferrer">
                {traceId}
              </a>
            ) : (
              <code>{traceId}</code>
            )}
          </span>
        )}
      </div>
      <ForkOrigin first={first} />
      {run && <RunFacts run={run} events={events} complete={complete} />}
      {run && <Gauges run={run} />}
      {run && run.children.length > 0 && (
        <p>
          Children:{' '}
          {run.children.map((child) => (
            <span key={child.childRunId}>
              <Link to={runPath(child.childRunId)}>{child.childRunId}</Link> ({child.status}){' '}
            </span>
          ))}
        </p>
      )}
      <RunPageContext.Provider value={cursor}>
        {run && <Actions run={run} calls={state.full?.calls} session={session} />}
        <ForkWithEdits events={events} selected={selectedEvent} session={session} />
        <TimeTravel run={state.full} events={events} count={count} complete={complete} />
        {conversations.length > 0 && <ViewTabs view={view} onView={setView} />}
        <div className="run-body">
          {view === 'conversation' && conversations.length > 0 ? (
            <ConversationView conversations={conversations} answering={answering} />
          ) : (
            <Timeline
              rows={rows}
              count={count}
              complete={complete}
              answering={answering}
              {...(nowMs === undefined ? {} : { nowMs })}
              {...(spanMs === undefined ? {} : { spanMs })}
            />
          )}
          {selectedEvent && <EventDetail event={selectedEvent} />}
        </div>
      </RunPageContext.Provider>
      {eventsError && <p className="error">{eventsError.message}</p>}
    </section>
  );
}
