import { memo, useEffect, useMemo, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { ConsoleSession, RunSummary } from '@dura/contracts';
import { useRuns } from '../api/queries';
import { filtersFromSearch, type RunFilters } from '../model/filters';
import { dollars, fullTime, pageTitle, shortDuration } from '../model/format';
import { listPath, navigate, runPath } from '../model/router';
import { Filters } from './Filters';
import { Link } from './Link';
import { StatusBadge } from './StatusBadge';

const ROW_HEIGHT = 36;
/** Statuses of a run that has not ended: its duration runs to now (as of the list's last render). */
const LIVE = new Set(['pending', 'running', 'waiting']);

/** Every run the token may see, newest activity first, filtered, paged by keyset as the user scrolls. */
export function RunList({ search, session }: { search: string; session: ConsoleSession }) {
  const [filters, setFilters] = useState<RunFilters>(() => filtersFromSearch(search));
  const runs = useRuns(filters);
  const rows = useMemo(() => runs.data?.pages.flatMap((page) => page.runs) ?? [], [runs.data]);
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 20,
  });
  const items = virtual.getVirtualItems();
  const lastIndex = items.at(-1)?.index ?? 0;
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = runs;
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage && lastIndex >= rows.length - 30) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage, lastIndex, rows.length]);
  const apply = (next: RunFilters) => {
    setFilters(next);
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(next))
      if ((Array.isArray(value) ? value.join(',') : value) !== '')
        query.set(key, Array.isArray(value) ? value.join(',') : String(value));
    const text = query.toString();
    navigate(listPath(text ? `?${text}` : ''), true);
  };
  const operator = session.tenant === '*';
  useEffect(() => {
    document.title = pageTitle('Runs');
  }, []);
  return (
    <section className="runs" aria-label="Runs">
      <div className="toolbar">
        <h1>Runs</h1>
        <form
          className="jump"
          onSubmit={(e) => {
            e.preventDefault();
            const id = new FormData(e.currentTarget).get('runId');
            if (typeof id === 'string' && id.trim() !== '') navigate(runPath(id.trim()));
          }}
        >
          <input name="runId" placeholder="Open run by id" aria-label="Open run by id" />
          <button type="submit">Open</button>
        </form>
      </div>
      <Filters value={filters} onChange={apply} operator={operator} />
      {runs.error && <p className="error">{runs.error.message}</p>}
      <div className={`table-head run-row${operator ? ' with-tenant' : ''}`} role="row">
        <span>Run</span>
        <span>Status</span>
        <span>Agent</span>
        {operator && <span>Tenant</span>}
        <span>Steps</span>
        <span>Tokens</span>
        <span>Cost</span>
        <span>Started</span>
        <span>Duration</span>
        <span>Error</span>
        <span>Tags</span>
      </div>
      <div
        ref={scroller}
        className="table-body"
        data-testid="run-list"
        role="table"
        aria-rowcount={rows.length}
      >
        <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
          {items.map((item) => {
            const run = rows[item.index];
            if (!run) return null;
            return (
              <div
                key={run.runId}
                className={`run-row${operator ? ' with-tenant' : ''}`}
                role="row"
                data-run-id={run.runId}
                style={{
                  position: 'absolute',
                  top: 0,
                  transform: `translateY(${item.start}px)`,
                  height: ROW_HEIGHT,
                }}
              >
                <RunCells run={run} operator={operator} />
              </div>
            );
          })}
        </div>
        {rows.length === 0 && runs.isSuccess && <p className="empty">No runs match these filters.</p>}
      </div>
      <p className="muted" aria-live="polite">
        {rows.length} runs loaded{hasNextPage ? ' · scroll for more' : ''}
      </p>
    </section>
  );
}

const RunCells = memo(function RunCells({ run, operator }: { run: RunSummary; operator: boolean }) {
  return (
    <>
      <span className="mono">
        {run.parentRunId && (
          <span className="muted" title={`child of ${run.parentRunId}`}>
            ↳{' '}
          </span>
        )}
        <Link to={runPath(run.runId)}>{run.runId}</Link>
        {(run.children ?? 0) > 0 && <span className="muted"> · {run.children} children</span>}
      </span>
      <span>
        <StatusBadge status={run.status} />
      </span>
      <span>{run.agent ?? 'scripted'}</span>
      {operator && <span>{run.tenant ?? ''}</span>}
      <span>{run.steps}</span>
      <span>{run.usage.inputTokens + run.usage.outputTokens}</span>
      <span data-testid="cost">{dollars(run.costUsd)}</span>
      <span title={run.createdAt} data-testid="started">
        {fullTime(run.createdAt)}
      </span>
      <span title={`last event ${fullTime(run.updatedAt)}`} data-testid="duration">
        {LIVE.has(run.status)
          ? `${shortDuration(Date.now() - Date.parse(run.createdAt))} so far`
          : shortDuration(Date.parse(run.updatedAt) - Date.parse(run.createdAt))}
      </span>
      <span
        className="error-cell"
        title={run.lastError ? `${run.lastError.code}: ${run.lastError.message}` : ''}
        data-testid="error"
      >
        {run.lastError ? `${run.lastError.code}: ${run.lastError.message}` : ''}
      </span>
      <span className="tags">{run.tags.join(', ')}</span>
    </>
  );
});
