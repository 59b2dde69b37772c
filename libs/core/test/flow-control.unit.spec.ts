import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  capacityReason,
  emptyLimitRecord,
  limitsFor,
  refilled,
  refundTicket,
  releaseSlot,
  renewSlot,
  settleTicket,
  takeSlot,
  takeTicket,
  throttled,
  QUEUE_GRACE_MS,
  TICKET_HORIZON_CALLS,
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
        let now = 0;
        const goes = [
          ...admitted(
            limit,
            gaps.map((gap, i) => ({ holder: `r${i}`, at: (now += gap) })),
          ).values(),
        ];
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

  it('given a ticket taken and given back (the call waits for something else), the bucket is as if it was never taken', () => {
    let record = emptyLimitRecord(0);
    for (let i = 0; i < 10; i++) record = takeTicket(record, limit, call(`r${i}`), 0).record;
    const before = record.levels;
    const taken = takeTicket(record, limit, call('back'), 100);
    expect(refundTicket(taken.record, limit, call('back'), 100).levels).toEqual(
      refilled(record, limit, 100).levels,
    );
    expect(before).toEqual({ requests: 48 });
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
    // Three quarters of the rate: the 5 s pause is 3.75 units of debt, beyond the horizon: the caller waits in
    // line, asks again when one call's worth is paid back, and gets its ticket for when its own is.
    const first = takeTicket(record, limit, call('a'), 0);
    expect(first.outcome).toEqual({ kind: 'line', recheckAt: 1_334, limit: 'requests per minute', ahead: 0 });
    const next = takeTicket(first.record, limit, call('a'), 1_334);
    expect(next.outcome).toEqual({ kind: 'at', at: 6_334, limit: 'requests per minute' });
    expect(record.throttle).toEqual({ factor: 0.75, until: 65_000 });
    // After the recovery time, the full rate is back.
    const recovered = takeTicket(next.record, limit, call('b'), 200_000);
    expect(recovered.outcome).toEqual({ kind: 'go' });
  });
});

describe('model limits: priority and fair share among callers in line', () => {
  const limit: ModelLimit = { model: MODEL, requestsPerMinute: 60 };
  const asks = (tenant: string, count: number, at: number, priority?: number) =>
    Array.from({ length: count }, (_, i) => ({
      holder: `${tenant}-${i}`,
      at: at + i,
      tenant,
      ...(priority === undefined ? {} : { priority }),
    }));
  const lastOf = (went: Map<string, number>, tenant: string) =>
    Math.max(...[...went].filter(([holder]) => holder.startsWith(`${tenant}-`)).map(([, at]) => at));

  it('given a tenant with a backlog of 300 calls, a tenant asking 10 calls later gets half the rate, not the end of the backlog', () => {
    const went = admitted(limit, [...asks('a', 300, 0), ...asks('b', 10, 5_000)]);
    // Both in line from 5 s on: b's 10 calls take 20 s at half of one call a second (and the horizon's 4 s).
    expect(lastOf(went, 'b')).toBeLessThanOrEqual(5_000 + 1.5 * 20_000);
    expect(lastOf(went, 'a')).toBeGreaterThan(200_000);
    expect(went.size).toBe(310);
  });

  it('given three tenants in line, each finishes within 1.5 times what its share predicts', () => {
    const went = admitted(limit, [...asks('a', 300, 0), ...asks('b', 20, 60_000), ...asks('c', 20, 60_000)]);
    // From 60 s on, three tenants share one call a second: 20 calls each take 60 s.
    expect(lastOf(went, 'b')).toBeLessThanOrEqual(60_000 + 1.5 * 60_000);
    expect(lastOf(went, 'c')).toBeLessThanOrEqual(60_000 + 1.5 * 60_000);
  });

  it('given weights 3 and 1, the heavier tenant gets three calls for each of the other', () => {
    const weighted = { ...limit, weights: { a: 3 } };
    const went = admitted(weighted, [...asks('a', 200, 0), ...asks('b', 200, 0)]);
    // After the first minute's burst, 80 calls go between 70 s and 150 s: about 60 of a and 20 of b.
    const window = [...went].filter(([, at]) => at > 70_000 && at <= 150_000);
    const ofA = window.filter(([holder]) => holder.startsWith('a-')).length;
    expect(ofA / window.length).toBeGreaterThan(0.7);
    expect(ofA / window.length).toBeLessThan(0.8);
  });

  it('given callers of priority 10 arriving behind a backlog, they go before every caller of priority 0 still in line', () => {
    const went = admitted(limit, [...asks('a', 100, 0), ...asks('b', 5, 10_000, 10)]);
    const lastHigh = lastOf(went, 'b');
    // At most the horizon's worth of a's tickets, handed out before b asked, goes after b arrived and before b's last.
    const overtaking = [...went].filter(
      ([holder, at]) => holder.startsWith('a-') && at > 10_000 && at < lastHigh,
    ).length;
    expect(overtaking).toBeLessThanOrEqual(TICKET_HORIZON_CALLS);
    expect(lastHigh).toBeLessThanOrEqual(10_000 + (5 + TICKET_HORIZON_CALLS + 1) * 1_000);
  });

  it('given a caller in line that never asks again (its run was cancelled), the callers behind it are held back only until its place lapses', () => {
    let record = emptyLimitRecord(0);
    // 58 go at once and 4 get tickets within the horizon: the next caller waits in line.
    for (let i = 0; i < 62; i++) record = takeTicket(record, limit, call(`r${i}`), 0).record;
    const gone = takeTicket(record, limit, call('gone'), 0);
    expect(gone.outcome).toMatchObject({ kind: 'line', ahead: 0 });
    const behind = takeTicket(gone.record, limit, call('next'), 1);
    expect(behind.outcome).toMatchObject({ kind: 'line', ahead: 1 });
    const lapsed = (gone.outcome as { recheckAt: number }).recheckAt + QUEUE_GRACE_MS;
    const after = takeTicket(behind.record, limit, call('next'), lapsed);
    expect(after.record.line).not.toHaveProperty('gone');
    expect(after.outcome.kind).not.toBe('line');
  });

  it('given random tenants and priorities and calls received up to 2 s late, the provider never refuses one and every caller goes', () => {
    const smoothed: ModelLimit = {
      model: MODEL,
      requestsPerMinute: 120,
      burstSeconds: 5,
      weights: { t1: 2 },
    };
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2_000 })),
            delay: fc.integer({ min: 0, max: 2_000 }),
            tenant: fc.constantFrom('t0', 't1', 't2'),
            priority: fc.constantFrom(0, 0, 5),
          }),
          { minLength: 1, maxLength: 200 },
        ),
        (calls) => {
          let now = 0;
          const asks = calls.map((c, i) => ({
            holder: `r${i}`,
            at: (now += c.gap),
            tenant: c.tenant,
            priority: c.priority,
          }));
          const went = admitted(smoothed, asks);
          const arrivals = calls.map(({ delay }, i) => (went.get(`r${i}`) as number) + delay);
          return went.size === calls.length && refusedAt(smoothed, arrivals).length === 0;
        },
      ),
      { numRuns: 300 },
    );
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

  it('given a slot renewed before its lease runs out, it is kept; after, it is lost and nothing is taken anew', () => {
    const limit: ModelLimit = { model: MODEL, concurrentCalls: 1 };
    const taken = takeSlot(emptyLimitRecord(0), limit, 'a', 1_000, 0).record;
    const renewed = renewSlot(taken, 'a', 1_000, 900);
    expect(renewed).toEqual({ record: { ...taken, slots: { a: 1_900 } }, lost: false });
    expect(renewSlot(renewed.record, 'a', 1_000, 1_900)).toEqual({ record: renewed.record, lost: true });
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
  let now = 0;
  const asks = calls.map(({ gap }, i) => ({ holder: `r${i}`, at: (now += gap) }));
  const goes = admitted(limit, asks);
  const arrivals = calls.map(({ delay }, i) => (goes.get(`r${i}`) as number) + delay);
  return refusedAt(limit, arrivals);
}

/** A provider whose bucket is `limit` exactly, receiving calls at `arrivals`: the times it refused one. */
function refusedAt(limit: ModelLimit, arrivals: readonly number[]): number[] {
  const perMinute = limit.requestsPerMinute ?? 0;
  const capacity = (perMinute * (limit.burstSeconds ?? 60)) / 60;
  let level = capacity;
  let at = 0;
  const refused: number[] = [];
  for (const t of [...arrivals].sort((a, b) => a - b)) {
    level = Math.min(capacity, level + ((t - at) * perMinute) / 60_000);
    at = t;
    if (level < 1 - 1e-9) refused.push(t);
    else level -= 1;
  }
  return refused;
}

/**
 * Plays `asks` through admission as planners do: a ticket's holder goes at its ticket, a caller in line asks
 * again at its recheck; when each holder went.
 */
function admitted(
  limit: ModelLimit,
  asks: readonly { holder: string; at: number; tenant?: string; priority?: number }[],
): Map<string, number> {
  let record: LimitRecord = emptyLimitRecord(0);
  const pending = asks.map((ask, order) => ({ ...ask, order }));
  const went = new Map<string, number>();
  for (let guard = 0; pending.length > 0; guard++) {
    if (guard > 1_000_000) throw new Error('admission never let every caller go');
    pending.sort((a, b) => a.at - b.at || a.order - b.order);
    const ask = pending.shift()!;
    const cost: CallCost = { ...call(ask.holder), tenant: ask.tenant, priority: ask.priority };
    const taken = takeTicket(record, limit, cost, ask.at);
    record = taken.record;
    const outcome = taken.outcome;
    if (outcome.kind === 'line') pending.push({ ...ask, at: outcome.recheckAt });
    else went.set(ask.holder, outcome.kind === 'go' ? ask.at : outcome.at);
  }
  return went;
}
