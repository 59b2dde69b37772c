// A date, or a date and time with a zone: a time without one would mean whatever zone the server runs in.
const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2})(?::?(\d{2}))?))?$/i;

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

/**
 * Whether `text` is an ISO 8601 date or date-time with a zone that names a real instant, so Postgres accepts
 * it as a timestamptz: `Date.parse` alone takes `2025-02-30` (rolling it to March 2) where Postgres refuses it,
 * which made such a filter a 500 instead of a 400.
 */
export function isIsoInstant(text: string): boolean {
  const m = ISO_TIME.exec(text);
  if (!m) return false;
  const [year, month, day, hour = 0, minute = 0, second = 0, zoneHours = 0, zoneMinutes = 0] = m
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part)));
  if (year === undefined || month === undefined || day === undefined) return false;
  return (
    year >= 1 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysIn(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    zoneHours <= 15 &&
    zoneMinutes <= 59
  );
}
