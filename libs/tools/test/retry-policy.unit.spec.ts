import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../src/index';

describe('retryDelayMs', () => {
  it('grows exponentially up to the cap, with full jitter below it', () => {
    const policy = { initialDelayMs: 100, multiplier: 3, maxDelayMs: 2000 };
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(policy, attempt, () => 1))).toEqual([
      100, 300, 900, 2000,
    ]);
    expect(retryDelayMs(policy, 3, () => 0)).toBe(0);
    expect(retryDelayMs(policy, 3, () => 0.5)).toBe(450);
  });

  it('has sane defaults: 500 ms doubling, capped at 30 s', () => {
    expect(retryDelayMs({}, 1, () => 1)).toBe(500);
    expect(retryDelayMs({}, 2, () => 1)).toBe(1000);
    expect(retryDelayMs({}, 20, () => 1)).toBe(30_000);
  });
});
