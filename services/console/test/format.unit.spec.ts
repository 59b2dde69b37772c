import { describe, expect, it } from 'vitest';
import { dollars, fullTime, pageTitle, shortDuration } from '../src/model/format';

describe('what the console prints', () => {
  it('a timestamp in full, to the second, in local time', () => {
    const at = new Date(2026, 10, 28, 9, 4, 5);
    expect(fullTime(at.toISOString())).toBe('2026-11-28 09:04:05');
    expect(fullTime('not a time')).toBe('not a time');
  });

  it('a duration short, from milliseconds to hours', () => {
    expect([850, 12_400, 185_000, 7_440_000].map(shortDuration)).toEqual([
      '850 ms',
      '12.4 s',
      '3 min 5 s',
      '2 h 4 min',
    ]);
    expect(shortDuration(-1)).toBe('');
  });

  it('a cost with the precision small amounts need, and the tab title of a page', () => {
    expect([undefined, 0, 0.0123, 4.5].map(dollars)).toEqual(['', '$0', '$0.0123', '$4.50']);
    expect(pageTitle('Runs')).toBe('Runs · Dura Console');
    expect(pageTitle(undefined)).toBe('Dura Console');
  });
});
