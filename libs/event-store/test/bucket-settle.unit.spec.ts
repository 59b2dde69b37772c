import { afterEach, describe, expect, it, vi } from 'vitest';
import { NoRespondersError, RequestError } from '@nats-io/nats-core';
import { BUCKET_SETTLE_MS, whileBucketSettles } from '../src/index';

const unanswered = () => new RequestError('no responders', { cause: new NoRespondersError('$KV.b.k') });

afterEach(() => {
  vi.useRealTimers();
});

describe('whileBucketSettles', () => {
  it('sends an unanswered write again until it is answered, and returns its answer', async () => {
    vi.useFakeTimers();
    let sent = 0;
    const result = whileBucketSettles(() => {
      sent += 1;
      return sent < 3 ? Promise.reject(unanswered()) : Promise.resolve(42);
    });
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(result).resolves.toBe(42);
    expect(sent).toBe(3);
  });

  it('throws any other failure at once, unsent again', async () => {
    let sent = 0;
    const err = new Error('wrong last sequence');
    await expect(
      whileBucketSettles(() => {
        sent += 1;
        return Promise.reject(err);
      }),
    ).rejects.toBe(err);
    expect(sent).toBe(1);
  });

  it('gives up on a write still unanswered after the settle time, with that failure', async () => {
    vi.useFakeTimers();
    let sent = 0;
    const result = whileBucketSettles(() => {
      sent += 1;
      return Promise.reject(unanswered());
    });
    const outcome = expect(result).rejects.toThrow('no responders');
    await vi.advanceTimersByTimeAsync(BUCKET_SETTLE_MS + 500);
    await outcome;
    expect(sent).toBeGreaterThan(10);
  });
});
