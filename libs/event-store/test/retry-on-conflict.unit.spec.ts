import { describe, expect, it } from 'vitest';
import { ConcurrencyConflict, retryOnConflict } from '../src/index';

/** An attempt that loses `losses` races, then returns what it read. */
function losing(losses: number) {
  let attempts = 0;
  const attempt = () => {
    attempts += 1;
    return attempts <= losses
      ? Promise.reject(new ConcurrencyConflict('r-1', attempts))
      : Promise.resolve(`read ${attempts}`);
  };
  return { attempt, attempts: () => attempts };
}

describe('retryOnConflict', () => {
  it('runs the attempt again after each lost race, and returns what the winning attempt returns', async () => {
    const run = losing(3);
    const seen: number[] = [];
    const result = await retryOnConflict(run.attempt, { maxConflicts: 3, onConflict: (n) => seen.push(n) });
    expect(result).toBe('read 4');
    expect(seen).toEqual([1, 2, 3]);
  });

  it('gives up after maxConflicts lost races, with the last conflict or the caller’s error', async () => {
    await expect(retryOnConflict(losing(10).attempt, { maxConflicts: 2 })).rejects.toBeInstanceOf(
      ConcurrencyConflict,
    );
    const run = losing(10);
    await expect(
      retryOnConflict(run.attempt, {
        maxConflicts: 2,
        giveUp: (conflicts) => new Error(`lost ${conflicts} races`),
      }),
    ).rejects.toThrow('lost 3 races');
    expect(run.attempts()).toBe(3);
  });

  it('passes any other error through at once', async () => {
    let attempts = 0;
    const attempt = () => {
      attempts += 1;
      return Promise.reject(new Error('the store is down'));
    };
    await expect(retryOnConflict(attempt, { maxConflicts: 5 })).rejects.toThrow('the store is down');
    expect(attempts).toBe(1);
  });
});
