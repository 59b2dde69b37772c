import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  emptyLimitRecord,
  lineOrder,
  nextInLine,
  releaseSlot,
  takeSlot,
  type LimitRecord,
  type ModelLimit,
  type SlotCaller,
} from '../src/index';

const LEASE = 60_000;
const one: ModelLimit = { model: 'key:export', concurrentCalls: 1 };

/** `holders` ask for the slot one after another from `now`, a millisecond apart (a free slot is taken). */
function queueAll(
  record: LimitRecord,
  limit: ModelLimit,
  holders: [string, SlotCaller][],
  now: number,
): LimitRecord {
  let next = record;
  holders.forEach(([holder, caller], i) => {
    next = takeSlot(next, limit, holder, LEASE, now + i, holder, caller).record;
  });
  return next;
}

/**
 * Plays the slot out as planners do: whoever holds it finishes and gives it back, the first in line is woken
 * and takes it. Returns the holders in the order they were served.
 */
function serveAll(
  start: LimitRecord,
  limit: ModelLimit,
  first: string,
  from: number,
): { served: string[]; record: LimitRecord } {
  let record = start;
  let holding = [first];
  const served: string[] = [];
  let now = from;
  for (;;) {
    now += 10;
    for (const holder of holding) record = releaseSlot(record, holder, now);
    const woken = nextInLine(record, limit, now);
    if (woken.length === 0) return { served, record };
    holding = [];
    for (const holder of woken) {
      const taken = takeSlot(record, limit, holder, LEASE, now);
      expect(taken.outcome).toEqual({ kind: 'go' });
      record = taken.record;
      holding.push(holder);
      served.push(holder);
    }
  }
}

const many = (tenant: string, count: number, priority = 0): [string, SlotCaller][] =>
  Array.from({ length: count }, (_, i) => [`${tenant}${i}`, { tenant, priority }]);

describe('slots: priority and fair share', () => {
  it('given a low-priority caller queued first, a higher-priority one asking later goes first when the slot frees', () => {
    let record = takeSlot(emptyLimitRecord(0), one, 'holder', LEASE, 0).record;
    record = queueAll(record, one, [['low', { priority: 0 }]], 10);
    const high = takeSlot(record, one, 'high', LEASE, 20, 'high', { priority: 10 });
    expect(high.outcome).toMatchObject({ kind: 'full', ahead: 0 });
    record = releaseSlot(high.record, 'holder', 30);
    expect(nextInLine(record, one, 30)).toEqual(['high']);
    // The low one, woken by a timer first, still waits: the slot is for the higher priority.
    expect(takeSlot(record, one, 'low', LEASE, 31).outcome).toMatchObject({ kind: 'full', ahead: 1 });
    expect(takeSlot(record, one, 'high', LEASE, 32).outcome).toEqual({ kind: 'go' });
  });

  it('given a free slot and queued callers of priority 0, a caller of priority 5 takes it before them', () => {
    const two: ModelLimit = { model: 'openai/gpt-4o-mini', concurrentCalls: 2 };
    let record = queueAll(
      emptyLimitRecord(0),
      two,
      [
        ['a', {}],
        ['b', {}],
        ['c', {}],
        ['d', {}],
      ],
      0,
    );
    record = releaseSlot(record, 'a', 5);
    expect(takeSlot(record, two, 'urgent', LEASE, 6, 'urgent', { priority: 5 }).outcome).toEqual({
      kind: 'go',
    });
  });

  it('given a tenant with 20 queued and another with 2 queued after them, the two are served within their share, not after the backlog', () => {
    let record = takeSlot(emptyLimitRecord(0), one, 'first', LEASE, 0, 'first', { tenant: 'a' }).record;
    record = queueAll(record, one, many('a', 20), 10);
    record = queueAll(record, one, many('b', 2), 20);
    const order = serveAll(record, one, 'first', 30).served;
    expect(order).toHaveLength(22);
    // Equal weights: b's callers alternate with a's, instead of waiting for 20 of a's.
    expect(order.indexOf('b0')).toBeLessThanOrEqual(1);
    expect(order.indexOf('b1')).toBeLessThanOrEqual(3);
    expect(order.filter((h) => h.startsWith('a'))).toEqual(many('a', 20).map(([h]) => h));
  });

  it('given weights 3 and 1, the heavier tenant gets three slots for each of the other while both wait', () => {
    const weighted: ModelLimit = { ...one, weights: { a: 3 } };
    let record = takeSlot(emptyLimitRecord(0), weighted, 'first', LEASE, 0, 'first', { tenant: 'c' }).record;
    record = queueAll(record, weighted, many('a', 30), 10);
    record = queueAll(record, weighted, many('b', 10), 10);
    const order = serveAll(record, weighted, 'first', 20).served;
    const firstTwenty = order.slice(0, 20);
    expect(firstTwenty.filter((h) => h.startsWith('a'))).toHaveLength(15);
    expect(firstTwenty.filter((h) => h.startsWith('b'))).toHaveLength(5);
  });

  it('given a tenant that was idle while another was served alone, it starts from where the others are, with no credit', () => {
    let record = takeSlot(emptyLimitRecord(0), one, 'first', LEASE, 0, 'first', { tenant: 'a' }).record;
    record = queueAll(record, one, many('a', 10), 10);
    const alone = serveAll(record, one, 'first', 20);
    expect(alone.served).toHaveLength(10);
    record = alone.record;
    // a was served 11 times while b was idle; now both queue 5 behind a holder of a's.
    record = takeSlot(record, one, 'more', LEASE, 1_000, 'more', { tenant: 'a' }).record;
    record = queueAll(
      record,
      one,
      [...many('x', 5).map(([h]) => [`a-${h}`, { tenant: 'a' }] as [string, SlotCaller]), ...many('b', 5)],
      1_010,
    );
    const order = serveAll(record, one, 'more', 1_100).served;
    // b goes first (a is a share ahead), then they alternate: b is not given a's 11 past slots in a row.
    expect(order.slice(0, 4).map((h) => h.charAt(0))).toEqual(['b', 'a', 'b', 'a']);
  });

  it('given callers queued before tenants and priorities were kept, they count as tenant default, priority 0, in the order they asked', () => {
    const record: LimitRecord = {
      ...emptyLimitRecord(0),
      slots: {},
      queue: { late: { since: 5, until: 99_999 }, early: { since: 1, until: 99_999 } },
    };
    expect(nextInLine(record, { ...one, concurrentCalls: 2 }, 10)).toEqual(['early', 'late']);
  });
});

describe('lineOrder', () => {
  it('puts every waiter of a higher priority before every waiter of a lower one, whatever the tenants served', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            tenant: fc.constantFrom('a', 'b', 'c'),
            priority: fc.integer({ min: -2, max: 2 }),
            since: fc.nat(100),
          }),
          { maxLength: 30 },
        ),
        fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.nat(50)),
        (waiters, served) => {
          const byHolder = Object.fromEntries(waiters.map((w, i) => [`h${i}`, w]));
          const order = lineOrder(byHolder, { served }, () => 1);
          const priorities = order.map((h) => (byHolder[h] as { priority: number }).priority);
          return priorities.every((p, i) => i === 0 || p <= (priorities[i - 1] as number));
        },
      ),
    );
  });

  it("keeps each tenant's waiters of one priority in the order they asked", () => {
    const order = lineOrder(
      {
        a2: { tenant: 'a', priority: 0, since: 30 },
        b1: { tenant: 'b', priority: 0, since: 5 },
        a1: { tenant: 'a', priority: 0, since: 10 },
      },
      {},
      () => 1,
    );
    expect(order.filter((h) => h.startsWith('a'))).toEqual(['a1', 'a2']);
  });
});
