import type { WaterfallRow } from '../model/waterfall';

/** Every row's height in px: fixed, so a row's place is its index times this, with nothing to measure. */
export const ROW_HEIGHT = 30;
/**
 * Rows drawn past each edge of the view: a wheel's step shows drawn rows before the next frame draws, and a
 * short run (up to 19 events) has every row in the page without scrolling.
 */
const OVERSCAN = 3;

/** What the pool draws: the rows, how many the run has (more while it is read), the span (ms), the selection. */
export interface PoolView {
  rows: readonly WaterfallRow[];
  count: number;
  total: number;
  selected: number | undefined;
}

/** The elements of one drawn row, and what each shows now (so a draw writes only what changed). */
interface Slot {
  el: HTMLDivElement;
  seq: Text;
  label: Text;
  facts: Text;
  bar: HTMLSpanElement;
  shown: { row?: WaterfallRow; top?: number; total?: number; selected?: boolean };
}

function slot(): Slot {
  const el = document.createElement('div');
  el.setAttribute('role', 'option');
  const span = (className: string) => {
    const s = document.createElement('span');
    s.className = className;
    return s;
  };
  const seqEl = span('seq');
  const labelEl = span('label');
  const track = span('bar-track');
  const bar = span('bar');
  const factsEl = span('facts');
  track.append(bar);
  el.append(seqEl, labelEl, track, factsEl);
  const text = (parent: HTMLElement) => parent.appendChild(document.createTextNode(''));
  return { el, seq: text(seqEl), label: text(labelEl), facts: text(factsEl), bar, shown: {} };
}

/** A row's facts as shown: the non-empty ones, joined. */
export const factsText = (row: WaterfallRow): string => row.facts.filter(Boolean).join(' · ');

/** A row's full description, its tooltip (set when the pointer comes over it, not on every draw). */
export const rowTitle = (row: WaterfallRow): string =>
  [`#${row.n} (stream sequence ${row.seq})`, row.label, factsText(row)].filter(Boolean).join(' · ');

const setText = (node: Text, text: string) => {
  if (node.data !== text) node.data = text;
};

function fill(s: Slot, row: WaterfallRow, top: number, total: number, selected: boolean): void {
  const { shown } = s;
  if (shown.row !== row) {
    s.el.id = `event-${row.seq}`;
    s.el.dataset['seq'] = String(row.seq);
    s.el.dataset['n'] = String(row.n);
    s.el.dataset['type'] = row.type;
    s.el.removeAttribute('title');
    setText(s.seq, String(row.n));
    setText(s.label, row.label);
    setText(s.facts, factsText(row));
    const bar = row.endMs === undefined ? 'bar open' : 'bar';
    if (s.bar.className !== bar) s.bar.className = bar;
  }
  if (shown.row?.kind !== row.kind || shown.selected !== selected) {
    s.el.className = `event-row kind-${row.kind}${selected ? ' selected' : ''}`;
    s.el.setAttribute('aria-selected', String(selected));
  }
  if (shown.row !== row || shown.total !== total) {
    const left = (row.startMs / total) * 100;
    const width = Math.max(0.4, (((row.endMs ?? total) - row.startMs) / total) * 100);
    s.bar.style.left = `${left}%`;
    s.bar.style.width = `${Math.min(width, 100 - left)}%`;
  }
  if (shown.top !== top) s.el.style.transform = `translateY(${top}px)`;
  s.shown = { row, top, total, selected };
}

/**
 * The waterfall's drawn rows: a fixed set of row elements, made once and refilled in place as the view
 * scrolls (a scrolled frame writes a few texts and attributes, and creates no element and runs no render).
 * Rows are absolutely placed at `index × ROW_HEIGHT` inside `body`, which is as tall as all rows.
 */
export function createRowPool(body: HTMLElement) {
  const slots: Slot[] = [];
  let view: PoolView = { rows: [], count: 0, total: 1, selected: undefined };
  let scrollTop = 0;
  let height = 0;
  const draw = () => {
    const { rows, total, selected } = view;
    const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
    const count = Math.max(0, last - first);
    while (slots.length < count) {
      const s = slot();
      slots.push(s);
      body.append(s.el);
    }
    while (slots.length > count) slots.pop()?.el.remove();
    // A row keeps its slot while in view (slot = index modulo the slots): a scroll refills only the rows
    // that came into view.
    for (let index = first; index < last; index += 1) {
      const row = rows[index];
      const s = slots[index % count];
      if (row && s) fill(s, row, index * ROW_HEIGHT, total, row.seq === selected);
    }
  };
  return {
    /** Draws `next` (new rows, span or selection). */
    show(next: PoolView): void {
      view = next;
      // As tall as the run, read or not: the scrollbar is the run's from the first screen.
      body.style.height = `${Math.max(next.count, next.rows.length) * ROW_HEIGHT}px`;
      draw();
    },
    /** Draws the rows in view at `top`, in a view `viewHeight` px tall. */
    scrolled(top: number, viewHeight: number): void {
      if (top === scrollTop && viewHeight === height) return;
      scrollTop = top;
      height = viewHeight;
      draw();
    },
    /** The row drawn in `el` (a row element or one inside it), if any. */
    rowAt(el: Element | null): WaterfallRow | undefined {
      const rowEl = el?.closest('.event-row');
      return slots.find((s) => s.el === rowEl)?.shown.row;
    },
  };
}
