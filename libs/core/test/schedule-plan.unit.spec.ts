import { describe, expect, it } from 'vitest';
import { CatchUpSchema } from '@dura/contracts';
import { InvalidCron, nextTicks, parseCron, planTicks, timingOf, UnknownTimeZone } from '../src/index';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const paris = (cron: string) => timingOf({ cron, timeZone: 'Europe/Paris' });

describe('parseCron', () => {
  it('reads ranges, steps, lists and names, with seconds as an optional first field', () => {
    const cron = parseCron('*/15 9-17 * JAN,jul mon-fri');
    expect([...cron.seconds]).toEqual([0]);
    expect([...cron.minutes]).toEqual([0, 15, 30, 45]);
    expect([...cron.hours]).toEqual([9, 10, 11, 12, 13, 14, 15, 16, 17]);
    expect([...cron.months]).toEqual([1, 7]);
    expect([...cron.weekdays]).toEqual([1, 2, 3, 4, 5]);
    expect(parseCron('*/10 * * * * 7').weekdays.has(0)).toBe(true);
  });

  it('refuses what is not a cron expression, saying which field is wrong', () => {
    expect(() => parseCron('* * *')).toThrow(InvalidCron);
    expect(() => parseCron('61 * * * *')).toThrow(/"61" is not a minute/);
    expect(() => parseCron('*/0 * * * *')).toThrow(/step/);
    expect(() => parseCron('5-1 * * * *')).toThrow(/backwards/);
  });

  it('refuses an unknown time zone', () => {
    expect(() => timingOf({ cron: '0 * * * *', timeZone: 'Mars/Olympus' })).toThrow(UnknownTimeZone);
  });
});

describe('cron ticks in a time zone', () => {
  it('follow local time: 09:00 in Paris is 08:00Z in winter and 07:00Z in summer', () => {
    const daily = paris('0 9 * * *');
    expect(iso(daily.next(at('2026-01-10T12:00:00Z')) ?? 0)).toBe('2026-01-11T08:00:00.000Z');
    expect(iso(daily.next(at('2026-07-10T12:00:00Z')) ?? 0)).toBe('2026-07-11T07:00:00.000Z');
  });

  it('matches day-of-month or day-of-week when both are given (classic cron)', () => {
    // The 13th, or any Friday: from Wed 2026-02-11, Fri 13th is both; then Fri 20th.
    const t = timingOf({ cron: '0 0 13 * fri' });
    expect(nextTicks(t, at('2026-02-11T00:00:00Z'), 2).map(iso)).toEqual([
      '2026-02-13T00:00:00.000Z',
      '2026-02-20T00:00:00.000Z',
    ]);
  });

  it('spring forward (Paris, 2026-03-29 02:00 → 03:00): a skipped 02:30 runs at 03:30, once', () => {
    const ticks = nextTicks(paris('30 2 * * *'), at('2026-03-27T12:00:00Z'), 3).map(iso);
    expect(ticks).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:30:00.000Z', // 02:30 does not exist: 03:30 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });

  it('spring forward: an hourly schedule skips the hour that does not exist and never doubles', () => {
    const ticks = nextTicks(paris('0 * * * *'), at('2026-03-29T00:00:00Z'), 3).map(iso);
    // 01:00 CET = 00:00Z is not after; then 03:00 CEST = 01:00Z, 04:00 CEST = 02:00Z, 05:00 CEST = 03:00Z.
    expect(ticks).toEqual([
      '2026-03-29T01:00:00.000Z',
      '2026-03-29T02:00:00.000Z',
      '2026-03-29T03:00:00.000Z',
    ]);
  });

  it('fall back (Paris, 2026-10-25 03:00 → 02:00): a daily 02:30 runs once, at the first 02:30', () => {
    const ticks = nextTicks(paris('30 2 * * *'), at('2026-10-24T12:00:00Z'), 3).map(iso);
    expect(ticks).toEqual([
      '2026-10-25T00:30:00.000Z', // 02:30 CEST; the second 02:30 (CET, 01:30Z) does not run
      '2026-10-26T01:30:00.000Z', // 02:30 CET
      '2026-10-27T01:30:00.000Z',
    ]);
  });

  it('fall back: an every-30-minutes schedule follows the real clock through the repeated hour', () => {
    const ticks = nextTicks(paris('*/30 * * * *'), at('2026-10-24T23:45:00Z'), 6).map(iso);
    expect(ticks).toEqual([
      '2026-10-25T00:00:00.000Z', // 02:00 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T01:00:00.000Z', // 02:00 CET (the hour again)
      '2026-10-25T01:30:00.000Z', // 02:30 CET
      '2026-10-25T02:00:00.000Z', // 03:00 CET
      '2026-10-25T02:30:00.000Z',
    ]);
  });

  it('every second across fall-back: one tick per real second, none skipped or repeated', () => {
    const t = paris('* * * * * *');
    const from = at('2026-10-25T00:59:55Z');
    expect(nextTicks(t, from, 10).map((ms) => (ms - from) / 1000)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

describe('interval ticks', () => {
  it('fall on whole multiples of the interval, whatever the zone', () => {
    const t = timingOf({ everyMs: 60_000 });
    expect(nextTicks(t, at('2026-03-29T01:59:30Z'), 2).map(iso)).toEqual([
      '2026-03-29T02:00:00.000Z',
      '2026-03-29T02:01:00.000Z',
    ]);
  });
});

describe('planTicks: which ticks to start', () => {
  const everySecond = timingOf({ everyMs: 1000 });
  const catchUp = (policy: 'skip' | 'last' | 'all', windowMs = 3_600_000) =>
    CatchUpSchema.parse({ policy, windowMs, graceMs: 2000 });
  const cursor = 100_000;

  it('on time: every tick since the cursor, whatever the policy', () => {
    for (const policy of ['skip', 'last', 'all'] as const)
      expect(planTicks(everySecond, cursor, cursor + 1500, catchUp(policy))).toEqual({
        fire: [101_000],
        skipped: 0,
        cursor: 101_500,
      });
  });

  it('after 10 s down, skip: only the ticks within the grace', () => {
    const plan = planTicks(everySecond, cursor, cursor + 10_000, catchUp('skip'));
    expect(plan.fire).toEqual([108_000, 109_000, 110_000]);
    expect(plan.skipped).toBe(7);
  });

  it('after 10 s down, last: the most recent missed tick, then those within the grace', () => {
    const plan = planTicks(everySecond, cursor, cursor + 10_000, catchUp('last'));
    expect(plan.fire).toEqual([107_000, 108_000, 109_000, 110_000]);
    expect(plan.skipped).toBe(6);
  });

  it('after 10 s down, all: every missed tick within the window', () => {
    expect(planTicks(everySecond, cursor, cursor + 10_000, catchUp('all')).fire).toHaveLength(10);
    const windowed = planTicks(everySecond, cursor, cursor + 10_000, catchUp('all', 4000));
    expect(windowed.fire).toEqual([107_000, 108_000, 109_000, 110_000]);
  });

  it('after months down, last with a monthly cron finds the last missed month', () => {
    const monthly = timingOf({ cron: '0 0 1 * *' });
    const plan = planTicks(monthly, at('2026-01-15T00:00:00Z'), at('2026-06-15T00:00:00Z'), catchUp('last'));
    expect(plan.fire.map(iso)).toEqual(['2026-06-01T00:00:00.000Z']);
    expect(plan.skipped).toBe(4);
  });
});
