// The payment witness's books of attempts: how the nemesis checker tells a call run again after a status
// look-up found nothing (a higher attempt, after the earlier one) from a paused caller's request that arrived
// after another replica's later attempt (a late request, charged once by its key).
import { describe, expect, it } from 'vitest';
import { lateArrivals, startPaymentWitness } from '../src/index';

describe('the payment witness and late requests', () => {
  it('records the attempt each request carries, in order of arrival, and charges a key once', async () => {
    await using witness = await startPaymentWitness();
    const post = (attempt?: string) =>
      fetch(`${witness.url}/charges`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': 'k1',
          ...(attempt === undefined ? {} : { 'x-attempt': attempt }),
        },
        body: JSON.stringify({ amount: 5 }),
      });
    for (const attempt of ['2', '1', undefined, 'x'])
      expect((await post(attempt)).status).toBeLessThan(300);
    expect(witness.attempts('k1')).toEqual([2, 1, undefined, undefined]);
    expect(witness.requests('k1')).toBe(4);
    expect(witness.effects('k1')).toBe(1);
    expect(lateArrivals(witness.attempts('k1'))).toBe(1);
  });

  it('counts as late only a request below an attempt that arrived before it', () => {
    expect(lateArrivals([])).toBe(0);
    expect(lateArrivals([1])).toBe(0);
    // A re-run after the first attempt arrived: not late.
    expect(lateArrivals([1, 2])).toBe(0);
    // The same attempt twice is no late request (the checker counts it as a second request).
    expect(lateArrivals([1, 1])).toBe(0);
    // The paused first attempt arriving after the second.
    expect(lateArrivals([2, 1])).toBe(1);
    expect(lateArrivals([1, 3, 2, 1, 4])).toBe(2);
    expect(lateArrivals([undefined, 2, undefined, 1])).toBe(1);
  });
});
