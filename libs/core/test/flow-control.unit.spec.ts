import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  capacityReason,
  emptyLimitRecord,
  limitsFor,
  releaseSlot,
  settleTicket,
  takeSlot,
  takeTicket,
  throttled,
  type CallCost,
  type LimitRecord,
  type ModelLimit,
} from '../src/index';

const MODEL = 'openai/gpt-4o-mini';
const call = (holder: string, inputTokens = 0, outputTokens = 0): CallCost => ({
  holder,
  inputTokens,
  outputTokens,
});

describe('model limits: rate tickets', () => {
  const limit: ModelLimit = { model: MODEL, requestsPerMinute: 60 };

  it('given a fresh limit, a minute of requests less the headroom goes at once and the next one gets a ticket a second later', () => {
    let record = emptyLimitRecord(0);
    // The default headroom keeps 2 seconds' worth (2 requests) for calls in transit.
    for (let i = 0; i < 58; i++) {
      const taken = takeTicket(record, limit, call(`r${i}`), 0);
      expect(taken.outcome).toEqual({ kind: 'go' });
      record = taken.record;
    }
    const next = takeTicket(record, limit, call('r58'), 0);
    expect(next.outcome).toEqual({ kind: 'at', at: 1_000, limit: 'requests per minute' });
    const after = takeTicket(next.record, limit, call('r59'), 0);
    // Served in the order they asked: the later caller's ticket is later.
    expect(after.outcome).toEqual({ kind: 'at', at: 2_000, limit: 'requests per minute' });
  });

  it('given tickets handed out, no sliding minute admits more than the limit (a provider counting the same bucket never refuses)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: 1, maxLength: 300 }), (gaps) => {
        let record: LimitRecord = emptyLimitRecord(0);
        let now = 0;
        const goes: number[] = [];
        gaps.forEach((gap, i) => {
          now += gap;
          const taken = takeTicket(record, limit, call(`r${i}`), now);
          record = taken.record;
          goes.push(taken.outcome.kind === 'go' ? now : taken.outcome.at);
        });
        // A provider's bucket: capacity 60, refilled at one per second; each call must find a unit in it.
        let level = 60;
        let at = 0;
        for (const t of [...goes].sort((a, b) => a - b)) {
          level = Math.min(60, level + (t - at) / 1_000);
          at = t;
          level -= 1;
          if (level < -1e-9) return false;
        }
        return true;
      }),
    );
  });

  it('given calls that reach the provider up to 2 s after they were admitted, in any order, the provider never refuses one', () => {
    // The provider counts a call when it arrives. A call admitted while its bucket was full but received
    // late (a loaded planner, a timer that fired late) meets calls admitted after it: the headroom covers it.
    const smoothed: ModelLimit = { model: MODEL, requestsPerMinute: 120, burstSeconds: 5 };
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3_000 })),
            delay: fc.oneof(fc.constant(0), fc.constant(2_000), fc.integer({ min: 0, max: 2_000 })),
          }),
          { minLength: 1, maxLength: 300 },
        ),
        (calls) => refusedByProvider(smoothed, calls).length === 0,
      ),
      { numRuns: 1_000 },
    );
  });

  it('given a burst admitted while the provider idled and received a second late, the headroom keeps the calls after it from being refused', () => {
    // 60 calls at once, each received a second after admission; then one every half second, received at once.
    const calls = [
      ...Array.from({ length: 60 }, () => ({ gap: 0, delay: 1_000 })),
      ...Array.from({ length: 20 }, () => ({ gap: 500, delay: 0 })),
    ];
    expect(refusedByProvider({ ...limit, headroomSeconds: 0 }, calls).length).toBeGreaterThan(0);
    expect(refusedByProvider(limit, calls)).toEqual([]);
  });

  it('given the worst case taken and a smaller usage recorded, the difference is given back', () => {
    const tokens: ModelLimit = { model: MODEL, inputTokensPerMinute: 1_000, outputTokensPerMinute: 500 };
    const worst = call('r1', 600, 400);
    const exact = { ...tokens, headroomSeconds: 0 };
    const taken = takeTicket(emptyLimitRecord(0), exact, worst, 0);
    expect(taken.record.levels).toEqual({ input: 400, output: 100 });
    const settled = settleTicket(taken.record, exact, worst, { inputTokens: 550, outputTokens: 20 }, 0);
    expect(settled.levels).toEqual({ input: 450, output: 480 });
  });

  it('given output tokens binding, the wait names that limit', () => {
    const tokens: ModelLimit = {
      model: MODEL,
      requestsPerMinute: 100,
      outputTokensPerMinute: 600,
      headroomSeconds: 0,
    };
    const first = takeTicket(emptyLimitRecord(0), tokens, call('a', 10, 600), 0);
    const second = takeTicket(first.record, tokens, call('b', 10, 60), 0);
    expect(second.outcome).toEqual({ kind: 'at', at: 6_000, limit: 'output tokens per minute' });
  });

  it('given a call larger than a minute of tokens, it waits for a full bucket instead of forever', () => {
    const tokens: ModelLimit = { model: MODEL, inputTokensPerMinute: 100, headroomSeconds: 0 };
    const first = takeTicket(emptyLimitRecord(0), tokens, call('a', 50), 0);
    const huge = takeTicket(first.record, tokens, call('b', 10_000), 0);
    expect(huge.outcome).toEqual({ kind: 'at', at: 30_000, limit: 'input tokens per minute' });
    // With headroom, the bucket never holds a full minute: the call goes once it holds all it can.
    const kept = { ...tokens, headroomSeconds: 6 };
    const firstKept = takeTicket(emptyLimitRecord(0), kept, call('a', 50), 0);
    const hugeKept = takeTicket(firstKept.record, kept, call('b', 10_000), 0);
    expect(hugeKept.outcome).toEqual({ kind: 'at', at: 36_000, limit: 'input tokens per minute' });
  });

  it('given a 429 with Retry-After, nothing goes before it and the rate stays lowered for a while', () => {
    const record = throttled(emptyLimitRecord(0), limit, 5_000, 0);
    const next = takeTicket(record, limit, call('a'), 0);
    // Three quarters of the rate: the 5 s pause is 3.75 units of debt, one more is paid back at 0.75 per second.
    expect(next.outcome).toEqual({ kind: 'at', at: 6_334, limit: 'requests per minute' });
    expect(record.throttle).toEqual({ factor: 0.75, until: 65_000 });
    // After the recovery time, the full rate is back.
    const recovered = takeTicket(next.record, limit, call('b'), 200_000);
    expect(recovered.outcome).toEqual({ kind: 'go' });
  });
});

describe('model limits: concurrency slots', () => {
  const limit: ModelLimit = { model: MODEL, concurrentCalls: 2 };

  it('given two slots held, a third caller queues; when one is released, it goes before a later caller', () => {
    let record = emptyLimitRecord(0);
    record = takeSlot(record, limit, 'a', 60_000, 0).record;
    record = takeSlot(record, limit, 'b', 60_000, 0).record;
    const c = takeSlot(record, limit, 'c', 60_000, 10);
    expect(c.outcome.kind).toBe('full');
    const d = takeSlot(c.record, limit, 'd', 60_000, 20);
    expect(d.outcome).toMatchObject({ kind: 'full', ahead: 1 });
    record = releaseSlot(d.record, 'a', 30);
    // d asks first after the release, but c asked earlier and still waits.
    expect(takeSlot(record, limit, 'd', 60_000, 40).outcome.kind).toBe('full');
    const cGoes = takeSlot(record, limit, 'c', 60_000, 50);
    expect(cGoes.outcome).toEqual({ kind: 'go' });
    expect(Object.keys(cGoes.record.slots).sort()).toEqual(['b', 'c']);
  });

  it('given a holder killed mid-call, its slot comes back when the lease runs out', () => {
    const one: ModelLimit = { model: MODEL, concurrentCalls: 1 };
    const held = takeSlot(emptyLimitRecord(0), one, 'dead', 10_000, 0).record;
    expect(takeSlot(held, one, 'next', 10_000, 9_999).outcome.kind).toBe('full');
    expect(takeSlot(held, one, 'next', 10_000, 10_001).outcome).toEqual({ kind: 'go' });
  });

  it('given a queued caller that never asks again (cancelled), it stops holding back the ones behind it', () => {
    const one: ModelLimit = { model: MODEL, concurrentCalls: 1 };
    let record = takeSlot(emptyLimitRecord(0), one, 'a', 5_000, 0).record;
    const gone = takeSlot(record, one, 'gone', 5_000, 1);
    if (gone.outcome.kind !== 'full') throw new Error('expected a full limit');
    record = releaseSlot(gone.record, 'a', 2);
    const late = gone.outcome.recheckAt + 30_001;
    expect(takeSlot(record, one, 'late', 5_000, late).outcome).toEqual({ kind: 'go' });
  });
});

describe('model limits: which apply', () => {
  it('given a shared limit and a per-tenant one, a call counts against both, each under its own key', () => {
    const limits: ModelLimit[] = [
      { model: MODEL, requestsPerMinute: 60 },
      { model: MODEL, tenant: '*', requestsPerMinute: 20 },
      { model: MODEL, tenant: 'acme', concurrentCalls: 1 },
      { model: 'anthropic/claude', requestsPerMinute: 5 },
    ];
    expect(limitsFor(limits, MODEL, 'acme').map((l) => l.key)).toEqual([
      MODEL,
      `${MODEL}@acme`,
      `${MODEL}@acme`,
    ]);
    expect(limitsFor(limits, MODEL, 'other').map((l) => l.key)).toEqual([MODEL, `${MODEL}@other`]);
    expect(capacityReason(MODEL, 'input tokens per minute')).toBe(
      'capacity of openai/gpt-4o-mini (input tokens per minute)',
    );
  });
});

describe('model limits: a short burst', () => {
  it('given 120 requests/min with a 5 s burst and 1 s of headroom, 8 go at once and then one every half second', () => {
    const limit: ModelLimit = { model: MODEL, requestsPerMinute: 120, burstSeconds: 5, headroomSeconds: 1 };
    let record = emptyLimitRecord(0);
    const outcomes = Array.from({ length: 10 }, (_, i) => {
      const taken = takeTicket(record, limit, call(`r${i}`), 0);
      record = taken.record;
      return taken.outcome;
    });
    expect(outcomes.filter((o) => o.kind === 'go')).toHaveLength(8);
    expect(outcomes.slice(8)).toEqual([
      { kind: 'at', at: 500, limit: 'requests per minute' },
      { kind: 'at', at: 1_000, limit: 'requests per minute' },
    ]);
  });
});

/**
 * Admits `calls` (each asks `gap` ms after the one before) and plays them to a provider whose bucket is the
 * declared limit exactly, each received `delay` ms after it was admitted; the arrival times it refused.
 */
function refusedByProvider(limit: ModelLimit, calls: readonly { gap: number; delay: number }[]): number[] {
  const perMinute = limit.requestsPerMinute ?? 0;
  const capacity = (perMinute * (limit.burstSeconds ?? 60)) / 60;
  let record: LimitRecord = emptyLimitRecord(0);
  let now = 0;
  const arrivals = calls.map(({ gap, delay }, i) => {
    now += gap;
    const taken = takeTicket(record, limit, call(`r${i}`), now);
    record = taken.record;
    return (taken.outcome.kind === 'go' ? now : taken.outcome.at) + delay;
  });
  let level = capacity;
  let at = 0;
  const refused: number[] = [];
  for (const t of arrivals.sort((a, b) => a - b)) {
    level = Math.min(capacity, level + ((t - at) * perMinute) / 60_000);
    at = t;
    if (level < 1 - 1e-9) refused.push(t);
    else level -= 1;
  }
  return refused;
}
