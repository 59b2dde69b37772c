import { useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { WaterfallRow } from '../model/waterfall';
import { shortDuration } from '../model/format';
import { createRowPool, ROW_HEIGHT, rowTitle } from './row-pool';
import { useRunPage } from './run-page-context';

/**
 * The run's events as a waterfall, virtualized (only the rows in view are in the page, so 10,000 events
 * scroll like 10). Up/Down move the selection; the selected event's data shows beside it.
 */
export function Timeline({
  rows,
  count,
  complete,
  answering,
  nowMs,
  spanMs,
}: {
  rows: WaterfallRow[];
  /** How many events the run has: more than `rows` while the rest are read (`complete: false`). */
  count: number;
  complete: boolean;
  answering: string | undefined;
  /** Now, on the run's clock, while the run is live: open spans (waits, pending calls) reach it. */
  nowMs?: number;
  /** The run's span as its state gives it, while its last events are not read yet: the axis is drawn for it. */
  spanMs?: number;
}) {
  const { selected, onSelect } = useRunPage();
  const scroller = useRef<HTMLDivElement>(null);
  const body = useRef<HTMLDivElement>(null);
  const [pool, setPool] = useState<ReturnType<typeof createRowPool>>();
  // Both are O(events): once per change of the rows or the selection, not once per scrolled frame.
  const total = useMemo(
    () => rows.reduce((max, r) => Math.max(max, r.endMs ?? r.startMs), Math.max(1, nowMs ?? 0, spanMs ?? 0)),
    [rows, nowMs, spanMs],
  );
  const index = useMemo(() => rows.findIndex((r) => r.seq === selected), [rows, selected]);
  // The rows are drawn outside React: a scrolled frame refills the pool's elements in the scroll event itself
  // (before the frame paints), with no render. The view's height is read once, and again only on a resize.
  useLayoutEffect(() => {
    const el = scroller.current;
    const inner = body.current;
    if (!el || !inner) return;
    const rowPool = createRowPool(inner);
    let height = el.clientHeight;
    const onScroll = () => rowPool.scrolled(el.scrollTop, height);
    const resized = new ResizeObserver(() => {
      height = el.clientHeight;
      onScroll();
    });
    el.addEventListener('scroll', onScroll, { passive: true });
    resized.observe(el);
    onScroll();
    setPool(rowPool);
    return () => {
      el.removeEventListener('scroll', onScroll);
      resized.disconnect();
      inner.replaceChildren();
    };
  }, []);
  useLayoutEffect(() => {
    pool?.show({ rows, count, total, selected });
  }, [pool, rows, count, total, selected]);
  useEffect(() => {
    const el = scroller.current;
    if (index < 0 || !el) return;
    // Into view when it is not (the nearest edge), as a key or a link elsewhere selects it.
    const top = index * ROW_HEIGHT;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + ROW_HEIGHT > el.scrollTop + el.clientHeight)
      el.scrollTop = top + ROW_HEIGHT - el.clientHeight;
  }, [index]);
  const key = (event: KeyboardEvent) => {
    const step = event.key === 'ArrowDown' ? 1 : event.key === 'ArrowUp' ? -1 : 0;
    if (step === 0) return;
    event.preventDefault();
    const next = rows[Math.min(rows.length - 1, Math.max(0, (index < 0 ? -1 : index) + step))];
    if (next) onSelect(next.seq);
  };
  return (
    <div className="timeline">
      <TimeAxis total={total} />
      <div
        ref={scroller}
        className="timeline-body"
        tabIndex={0}
        role="listbox"
        aria-label="Events"
        aria-activedescendant={selected === undefined ? undefined : `event-${selected}`}
        onKeyDown={key}
        onClick={(event) => {
          const row = pool?.rowAt(event.target as Element);
          if (row) onSelect(row.seq);
        }}
        onMouseOver={(event) => {
          // A row's full text (cut with an ellipsis when long) is its tooltip, set when the pointer comes over it.
          const row = pool?.rowAt(event.target as Element);
          const el = (event.target as Element).closest('.event-row');
          if (row && el && !el.hasAttribute('title')) el.setAttribute('title', rowTitle(row));
        }}
        data-testid="timeline"
      >
        <div ref={body} className="timeline-rows" />
      </div>
      {answering !== undefined && (
        <div className="answering" aria-live="polite" data-testid="live-tokens">
          <strong>Model answering:</strong> {answering}
        </div>
      )}
      <p className="muted" data-testid="event-count" data-complete={complete}>
        {complete ? `${rows.length} events` : `reading events: ${rows.length} of ${count}`}
      </p>
    </div>
  );
}

/** The waterfall's time axis: from the run's first event to its last (or now), over the bars' column. */
function TimeAxis({ total }: { total: number }) {
  return (
    <div className="event-row time-axis" aria-hidden="true" data-testid="time-axis">
      <span />
      <span className="muted">time since the request</span>
      <span className="axis-track">
        {[0, 0.25, 0.5, 0.75, 1].map((at) => (
          <span key={at} className="tick" style={{ left: `${at * 100}%` }}>
            {shortDuration(total * at)}
          </span>
        ))}
      </span>
      <span />
    </div>
  );
}
