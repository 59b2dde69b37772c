import { DuraError } from '@dura/contracts';

const formatters = new Map<string, Intl.DateTimeFormat>();

export class UnknownTimeZone extends DuraError {
  constructor(zone: string) {
    super(
      'unknown_time_zone',
      `time zone "${zone}" is unknown: use an IANA name such as "Europe/Paris" or "UTC"`,
    );
  }
}

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new UnknownTimeZone(zone);
    }
    formatters.set(zone, f);
  }
  return f;
}

/** Throws `UnknownTimeZone` unless `zone` is an IANA time zone this runtime knows. */
export function assertTimeZone(zone: string): void {
  formatter(zone);
}

/** The zone's offset from UTC at `instant`, in milliseconds (Paris in summer: +7,200,000). */
export function zoneOffset(zone: string, instant: number): number {
  const at = Math.floor(instant / 1000) * 1000;
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(at))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const local = Date.UTC(
    parts['year'] ?? 1970,
    (parts['month'] ?? 1) - 1,
    parts['day'] ?? 1,
    parts['hour'] ?? 0,
    parts['minute'] ?? 0,
    parts['second'] ?? 0,
  );
  return local - at;
}

/** The wall-clock time at `instant` in `zone`, as UTC-based milliseconds of a naive date-time. */
export function toLocal(zone: string, instant: number): number {
  return instant + zoneOffset(zone, instant);
}

/**
 * The instants whose wall-clock time in `zone` is `local`: one normally, two in a fall-back overlap (earlier
 * first), none in a spring-forward gap (`gapShifted` is then the instant the clock reads `local` plus the gap).
 * `earliest` bounds every instant of a later local time from below.
 */
export function instantsOf(
  zone: string,
  local: number,
): { instants: number[]; gapShifted?: number; earliest: number } {
  const before = zoneOffset(zone, local - 86_400_000);
  const after = zoneOffset(zone, local + 86_400_000);
  const instants = [...new Set([local - before, local - after])]
    .filter((instant) => zoneOffset(zone, instant) === local - instant)
    .sort((a, b) => a - b);
  // No instant of a later local time comes before this one: a bound for searches.
  const earliest = local - Math.max(before, after);
  return instants.length > 0 ? { instants, earliest } : { instants, gapShifted: local - before, earliest };
}
