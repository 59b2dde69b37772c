import { describe, expect, it } from 'vitest';
import { nextPassDelay } from '../src/scheduler';

describe('nextPassDelay', () => {
  it('spreads a pass between half and one and a half intervals, the interval on average', () => {
    expect(nextPassDelay(250, () => 0)).toBe(125);
    expect(nextPassDelay(250, () => 0.5)).toBe(250);
    expect(nextPassDelay(250, () => 0.999_999)).toBe(375);
    const delays = Array.from({ length: 10_000 }, () => nextPassDelay(250, Math.random));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(125);
    expect(Math.max(...delays)).toBeLessThanOrEqual(375);
    const mean = delays.reduce((sum, d) => sum + d, 0) / delays.length;
    expect(mean).toBeGreaterThan(245);
    expect(mean).toBeLessThan(255);
  });
});
