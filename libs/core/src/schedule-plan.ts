import type { CatchUp, ScheduleSpec } from '@dura/contracts';
import { nextLocalMatch, parseCron, type CronExpression } from './cron';
import { assertTimeZone, instantsOf, toLocal, zoneOffset } from './time-zone';

/** When a schedule ticks: `next(after)` is its first tick strictly after `after` (ms), or undefined. */
export interface Timing {
  next(after: number): number | undefined;
}

const HOUR = 3_600_000;

/** The timing of a schedule's spec; throws `InvalidCron` or `UnknownTimeZone` on a bad one. */
export function timingOf(spec: Pick<ScheduleSpec, 'cron' | 'timeZone' | 'everyMs'>): Timing {
  if (spec.everyMs !== undefined) {
    const every = spec.everyMs;
    return { next: (after) => (Math.floor(after / every) + 1) * every };
  }
  const zone = spec.timeZone ?? 'UTC';
  assertTimeZone(zone);
  const cron = parseCron(spec.cron ?? '');
  return { next: (after) => nextCronTick(cron, zone, after) };
}

/** Throws the same errors as `timingOf`: how a schedule is checked before it is stored. */
export function checkSchedule(spec: Pick<ScheduleSpec, 'cron' | 'timeZone' | 'everyMs'>): void {
  timingOf(spec);
}

/**
 * A cron's first tick after `after` in `zone`. Daylight saving: a local time skipped by spring-forward runs
 * at the same offset past the jump (02:30 → 03:30), and a repeated local time of fall-back runs once, at its
 * first occurrence. Expressions for every hour instead follow the real clock: skipped times do not exist,
 * and the repeated hour runs twice.
 */
function nextCronTick(cron: CronExpression, zone: string, after: number): number | undefined {
  // Without a clock change before it, the first match forward is the answer.
  const ahead = scanCron(cron, zone, after, 0);
  if (ahead !== undefined && zoneOffset(zone, ahead) === zoneOffset(zone, after)) return ahead;
  // A fall-back within the next 3 hours makes earlier local times come again: search from that far back.
  const back = Math.max(0, zoneOffset(zone, after) - zoneOffset(zone, after + 3 * HOUR));
  return back === 0 ? ahead : scanCron(cron, zone, after, back);
}

/** The earliest tick after `after`, scanning local times from `back` ms before its own. */
function scanCron(cron: CronExpression, zone: string, after: number, back: number): number | undefined {
  let local = toLocal(zone, after) - back;
  let best: number | undefined;
  for (let i = 0; i < 100_000; i += 1) {
    const match = nextLocalMatch(cron, local);
    if (match === undefined) return best;
    const { instants, gapShifted, earliest } = instantsOf(zone, match);
    if (best !== undefined && earliest > best) return best;
    const candidates =
      gapShifted !== undefined
        ? cron.everyHour
          ? []
          : [gapShifted]
        : cron.everyHour
          ? instants
          : instants.slice(0, 1);
    for (const c of candidates) if (c > after && (best === undefined || c < best)) best = c;
    local = match + 1000;
  }
  return best;
}

/** The next `count` ticks after `after`. */
export function nextTicks(timing: Timing, after: number, count: number): number[] {
  const out: number[] = [];
  let t = after;
  while (out.length < count) {
    const next = timing.next(t);
    if (next === undefined) break;
    out.push(next);
    t = next;
  }
  return out;
}

export interface TickPlan {
  /** Ticks to start now, oldest first. */
  fire: number[];
  /** Ticks older than the grace that the catch-up policy does not run. */
  skipped: number;
  /** Every tick at or before it is handled once `fire` is. */
  cursor: number;
}

const MAX_TICKS_PER_PLAN = 1000;

/**
 * Which ticks in (cursor, now] to start. A tick within `graceMs` of `now` is on time and always starts; older
 * ones were missed (no replica ran) and follow the catch-up policy.
 */
export function planTicks(timing: Timing, cursor: number, now: number, catchUp: CatchUp): TickPlan {
  // Missed: at or before this instant (a tick exactly `graceMs` old is still on time).
  const missedUpTo = now - catchUp.graceMs - 1;
  const from = {
    skip: Math.max(cursor, missedUpTo),
    last: Math.max(cursor, missedUpTo),
    all: Math.max(cursor, now - Math.max(catchUp.windowMs, catchUp.graceMs)),
  }[catchUp.policy];
  const fire: number[] = [];
  let t = from;
  for (;;) {
    const next = timing.next(t);
    if (next === undefined || next > now) break;
    if (fire.length === MAX_TICKS_PER_PLAN) return { fire, skipped: 0, cursor: t };
    fire.push(next);
    t = next;
  }
  const missedLast = catchUp.policy === 'last' ? lastTickIn(timing, cursor, missedUpTo) : undefined;
  const skipped =
    catchUp.policy === 'all'
      ? 0
      : countTicks(
          timing,
          cursor,
          catchUp.policy === 'last' && missedLast !== undefined ? missedLast - 1 : from,
        );
  return { fire: missedLast === undefined ? fire : [missedLast, ...fire], skipped, cursor: now };
}

/** How many ticks fall in (from, to], counting at most 10,000. */
function countTicks(timing: Timing, from: number, to: number): number {
  let n = 0;
  for (let t = timing.next(from); t !== undefined && t <= to && n < 10_000; t = timing.next(t)) n += 1;
  return n;
}

/** The last tick in (from, to], searching back in growing windows so a dense cron stays cheap. */
function lastTickIn(timing: Timing, from: number, to: number): number | undefined {
  for (const span of [60_000, HOUR, 24 * HOUR, 32 * 24 * HOUR, 366 * 24 * HOUR, Infinity]) {
    let t = Math.max(from, to - span);
    let last: number | undefined;
    for (let i = 0; i < MAX_TICKS_PER_PLAN; i += 1) {
      const next = timing.next(t);
      if (next === undefined || next > to) break;
      last = next;
      t = next;
    }
    if (last !== undefined) return last;
    if (t <= from) return undefined;
  }
  return undefined;
}
