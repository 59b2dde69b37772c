/** A timestamp in full, to the second, in the viewer's time zone: `2026-11-28 23:04:05`. */
export function fullTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ` +
    `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`
  );
}

/** A duration, short: `850 ms`, `12.4 s`, `3 min 5 s`, `2 h 4 min`. */
export function shortDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.floor((ms % 60_000) / 1_000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Model spend in dollars, with the precision small amounts need. */
export function dollars(usd: number | undefined): string {
  if (usd === undefined) return '';
  return usd === 0 ? '$0' : usd < 1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** The browser tab's title for a page. */
export function pageTitle(page: string | undefined): string {
  return page ? `${page} · Dura Console` : 'Dura Console';
}
