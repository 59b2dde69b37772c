import { describe, expect, it } from 'vitest';
import { DuraError } from '@dura/contracts';
import { createLogger, startBackoffMs, waitUntilReachable } from '../src/index';

function harness() {
  const lines: string[] = [];
  const log = createLogger({ service: 'test', write: (line) => lines.push(line) });
  const slept: number[] = [];
  const reasons: (string | undefined)[] = [];
  return {
    lines,
    slept,
    reasons,
    options: {
      log,
      sleep: (ms: number) => {
        slept.push(ms);
        return Promise.resolve();
      },
      onWaiting: (reason: string | undefined) => reasons.push(reason),
    },
  };
}

describe('waitUntilReachable', () => {
  it('backs off from 0.5 s doubling to 10 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => startBackoffMs(n))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });

  it('given a dependency down for three attempts, when it comes up, then it resolves, having logged each wait and cleared the reason', async () => {
    const h = harness();
    let calls = 0;
    const result = await waitUntilReachable(
      'NATS at nats://127.0.0.1:1',
      () => {
        calls += 1;
        if (calls <= 3)
          return Promise.reject(new DuraError('nats_unreachable', 'connection refused', { retryable: true }));
        return Promise.resolve('connected');
      },
      h.options,
    );
    expect(result).toBe('connected');
    expect(h.slept).toEqual([500, 1000, 2000]);
    expect(h.reasons).toEqual([
      'waiting for NATS at nats://127.0.0.1:1 (attempt 1 failed: connection refused)',
      'waiting for NATS at nats://127.0.0.1:1 (attempt 2 failed: connection refused)',
      'waiting for NATS at nats://127.0.0.1:1 (attempt 3 failed: connection refused)',
      undefined,
    ]);
    const records = h.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.map((r) => [r['level'], r['attempt'], r['retryInMs']])).toEqual([
      ['warn', 1, 500],
      ['warn', 2, 1000],
      ['warn', 3, 2000],
      ['info', undefined, undefined],
    ]);
    expect(records[3]).toMatchObject({ msg: 'NATS at nats://127.0.0.1:1 reachable', attempts: 4 });
  });

  it.each([
    ['bad credentials', new DuraError('nats_auth_failed', 'rejected user planner')],
    ['a missing database', new DuraError('database_missing', 'no such database')],
    ['a plain error', new Error('bug')],
  ])('given %s, it throws at once without waiting', async (_, error) => {
    const h = harness();
    await expect(waitUntilReachable('NATS', () => Promise.reject(error), h.options)).rejects.toBe(error);
    expect(h.slept).toEqual([]);
  });
});
