import { memo, useEffect, useMemo, useRef, type KeyboardEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { WaterfallRow } from '../model/waterfall';
import { shortDuration } from '../model/format';

const ROW_HEIGHT = 30;

/**
 * The run's events as a waterfall, virtualized (only the rows in view are in the page, so 10,000 events
 * scroll like 10). Up/Down move the selection; the selected event's data shows beside it.
 */
export function Timeline({
  rows,
  selected,
  onSelect,
  answering,
  nowMs,
}: {
  rows: WaterfallRow[];
  selected: number | undefined;
  onSelect: (seq: number) => void;
  answering: string | undefined;
  /** Now, on the run's clock, while the run is live: open spans (waits, pending calls) reach it. */
  nowMs?: number;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    // Rows past the edges, rendered ahead of a scroll: a few cover a wheel's step; each one more is work
    // in every frame of a long jump.
    overscan: 3,
  });
  // Both are O(events): once per change of the rows or the selection, not once per scrolled frame.
  const total = useMemo(
    () => rows.reduce((max, r) => Math.max(max, r.endMs ?? r.startMs), Math.max(1, nowMs ?? 0)),
    [rows, nowMs],
  );
  const index = useMemo(() => rows.findIndex((r) => r.seq === selected), [rows, selected]);
  useEffect(() => {
    if (index >= 0) virtual.scrollToIndex(index, { align: 'auto' });
  }, [index, virtual]);
  const items = virtual.getVirtualItems();
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
        data-testid="timeline"
      >
        <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
          {items.map((item) => {
            const row = rows[item.index];
            if (!row) return null;
            return (
              <EventRow
                // Keyed by place modulo the rows drawn, not by event: rows that stay in view keep their
                // elements, and a row scrolled out gives its elements to the one scrolled in, so a scrolled
                // frame updates a few texts and attributes instead of creating and dropping elements.
                key={item.index % items.length}
                row={row}
                top={item.start}
                total={total}
                selected={row.seq === selected}
                onSelect={onSelect}
              />
            );
          })}
        </div>
      </div>
      {answering !== undefined && (
        <div className="answering" aria-live="polite" data-testid="live-tokens">
          <strong>Model answering:</strong> {answering}
        </div>
      )}
      <p className="muted">{rows.length} events</p>
    </div>
  );
}

/**
 * One row; memoized, so scrolling renders only the rows that come into view. Its full text (cut with an
 * ellipsis when long) is its tooltip, set when the pointer comes over it rather than on every row drawn.
 */
const EventRow = memo(function EventRow({
  row,
  top,
  total,
  selected,
  onSelect,
}: {
  row: WaterfallRow;
  top: number;
  total: number;
  selected: boolean;
  onSelect: (seq: number) => void;
}) {
  const facts = useMemo(() => row.facts.filter(Boolean).join(' · '), [row.facts]);
  const end = row.endMs ?? total;
  const left = (row.startMs / total) * 100;
  const width = Math.max(0.4, ((end - row.startMs) / total) * 100);
  return (
    <div
      id={`event-${row.seq}`}
      role="option"
      aria-selected={selected}
      className={`event-row kind-${row.kind}${selected ? ' selected' : ''}`}
      data-seq={row.seq}
      data-n={row.n}
      data-type={row.type}
      onClick={() => onSelect(row.seq)}
      onMouseEnter={(event) => {
        event.currentTarget.title = [`#${row.n} (stream sequence ${row.seq})`, row.label, facts]
          .filter(Boolean)
          .join(' · ');
      }}
      style={{ position: 'absolute', top: 0, transform: `translateY(${top}px)`, height: ROW_HEIGHT }}
    >
      <span className="seq">{row.n}</span>
      <span className="label">{row.label}</span>
      <span className="bar-track">
        <span
          className={`bar${row.endMs === undefined ? ' open' : ''}`}
          style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }}
        />
      </span>
      <span className="facts">{facts}</span>
    </div>
  );
});

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
