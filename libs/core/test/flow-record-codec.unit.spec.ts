import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeLimitRecord,
  dueInLine,
  emptyLimitRecord,
  encodeLimitRecord,
  LINE_RECHECK_MAX_MS,
  MAX_LINE,
  QUEUE_GRACE_MS,
  settleTicket,
  takeSlot,
  takeTicket,
  throttled,
  type CallCost,
  type LimitRecord,
  type ModelLimit,
} from '../src/index';

const MODEL = 'openai/gpt-4o-mini';
const T0 = 1_764_443_794_123;
const stored = (record: LimitRecord) => decodeLimitRecord(JSON.parse(encodeLimitRecord(record)));
const call = (holder: string, tenant: string, priority = 0): CallCost => ({
  holder,
  inputTokens: 100,
  outputTokens: 20,
  tenant,
  priority,
});

/** A record as admission leaves it: tickets, a line of two tenants and priorities, a woken caller, a throttle. */
function busyRecord(): { record: LimitRecord; limit: ModelLimit } {
  const limit: ModelLimit = {
    model: MODEL,
    requestsPerMinute: 2,
    inputTokensPerMinute: 1_000,
    weights: { b: 2 },
  };
  let record = emptyLimitRecord(T0);
  for (let i = 0; i < 30; i++) {
    const who = call(`run-${i}:0`, i % 3 === 0 ? 'a' : 'b', i % 7 === 0 ? 5 : 0);
    record = takeTicket(record, limit, who, T0 + i * 13).record;
  }
  record = settleTicket(record, limit, call('run-0:0', 'a'), { inputTokens: 10, outputTokens: 2 }, T0 + 500);
  // Ten minutes on, the line moved faster than its callers were told: the first are woken.
  record = takeTicket(record, limit, call('late:0', 'a'), T0 + 10 * 60_000).record;
  record = dueInLine(record, limit, call('late:0', 'a'), T0 + 10 * 60_000).record;
  record = throttled(record, limit, 5_000, T0 + 10 * 60_000 + 1);
  return { record, limit };
}

describe('a limit record as stored in dura_flow', () => {
  it('given a record with a line, tickets, a woken caller and a throttle, it reads back equal', () => {
    const { record } = busyRecord();
    expect(Object.values(record.line ?? {}).some((entry) => entry.woken !== undefined)).toBe(true);
    expect(stored(record)).toEqual(record);
  });

  it('given slots, a queue (with and without tenant and priority), shares and a key limit, it reads back equal', () => {
    const limit = { model: 'key', concurrentCalls: 1, weights: { gold: 3 } };
    let record = takeSlot(emptyLimitRecord(T0), limit, 'run_1', 60_000, T0).record;
    record = takeSlot(record, limit, 'run_2', 60_000, T0 + 1, 'run_2', {
      tenant: 'gold',
      priority: 2,
    }).record;
    record = {
      ...record,
      keyLimit: 1,
      queue: { ...record.queue, old: { since: T0 - 5, until: T0 + 40_000 } },
    };
    expect(stored(record)).toEqual(record);
  });

  it('given any record with whole-ms times, it reads back equal (property)', () => {
    const time = fc.integer({ min: -LINE_RECHECK_MAX_MS, max: LINE_RECHECK_MAX_MS });
    const tenant = fc.constantFrom('default', 'a', 'b', 'tenant with spaces');
    const lineEntry = fc.record(
      { tenant, priority: fc.integer({ min: -3, max: 3 }), since: time, until: time, woken: time },
      { requiredKeys: ['tenant', 'priority', 'since', 'until'] },
    );
    const waiter = fc.record(
      { since: time, until: time, tenant, priority: fc.integer({ min: 0, max: 3 }) },
      { requiredKeys: ['since', 'until'] },
    );
    const shares = fc.record(
      {
        served: fc.dictionary(tenant, fc.double({ noNaN: true, noDefaultInfinity: true })),
        virtual: fc.double({ noNaN: true, noDefaultInfinity: true }),
      },
      { requiredKeys: [] },
    );
    const record = fc.record(
      {
        at: fc.integer({ min: 0, max: 2 ** 45 }),
        levels: fc.record(
          { requests: fc.double({ noNaN: true, noDefaultInfinity: true }), input: fc.integer() },
          { requiredKeys: [] },
        ),
        slots: fc.dictionary(fc.string(), time),
        queue: fc.dictionary(fc.string(), waiter),
        line: fc.dictionary(fc.string(), lineEntry),
        throttle: fc.record({ factor: fc.double({ min: 0.25, max: 1, noNaN: true }), until: time }),
        served: fc.dictionary(tenant, fc.double({ noNaN: true, noDefaultInfinity: true })),
        virtual: fc.double({ noNaN: true, noDefaultInfinity: true }),
        keyLimit: fc.integer({ min: 1, max: 100 }),
        slotShares: shares,
      },
      { requiredKeys: ['at', 'levels', 'slots', 'queue'] },
    );
    fc.assert(
      fc.property(record, (generated) => {
        // Times as admission writes them: whole ms near `at`.
        const r = generated as LimitRecord;
        const shift = (t: number) => r.at + t;
        const absolute: LimitRecord = {
          ...r,
          slots: Object.fromEntries(Object.entries(r.slots).map(([k, t]) => [k, shift(t)])),
          queue: Object.fromEntries(
            Object.entries(r.queue).map(([k, w]) => [
              k,
              { ...w, since: shift(w.since), until: shift(w.until) },
            ]),
          ),
          ...(r.line && {
            line: Object.fromEntries(
              Object.entries(r.line).map(([k, e]) => [
                k,
                {
                  ...e,
                  since: shift(e.since),
                  until: shift(e.until),
                  ...(e.woken !== undefined && { woken: shift(e.woken) }),
                },
              ]),
            ),
          }),
          ...(r.throttle && { throttle: { ...r.throttle, until: shift(r.throttle.until) } }),
        };
        // JSON keeps no -0: the record read back is compared as JSON would give it.
        expect(stored(absolute)).toEqual(JSON.parse(JSON.stringify(absolute)));
      }),
      { numRuns: 300 },
    );
  });

  it('given a record written before the compact form, it reads as it was and admission goes on from it', () => {
    const limit: ModelLimit = { model: MODEL, requestsPerMinute: 1 };
    const old =
      '{"at":1764443794123,"levels":{"requests":-3},"slots":{},"queue":{},' +
      '"line":{"cap-000005:0":{"tenant":"default","priority":0,"since":1764443794200,"until":1764443944200},' +
      '"cap-000006:0":{"tenant":"default","priority":0,"since":1764443794300,"until":1764444004300,"woken":1764443800000}},' +
      '"served":{"default":5},"virtual":4}';
    const record = decodeLimitRecord(JSON.parse(old));
    expect(record).toEqual(JSON.parse(old));
    expect(record.line?.['cap-000006:0']?.woken).toBe(1_764_443_800_000);
    const next = takeTicket(record, limit, call('cap-000007:0', 'default'), T0 + 1_000);
    expect(next.outcome).toMatchObject({ kind: 'line', ahead: 2 });
    // Written back in the compact form, it reads as the record admission made.
    expect(stored(next.record)).toEqual(next.record);
    expect(JSON.parse(encodeLimitRecord(next.record))).toMatchObject({ v: 2 });
  });

  it('given a time that is not whole ms, the record is written in the first form, and reads back equal', () => {
    const record: LimitRecord = { ...emptyLimitRecord(T0 + 0.5), slots: { s: T0 + 1_000 } };
    expect(JSON.parse(encodeLimitRecord(record))).not.toHaveProperty('v');
    expect(stored(record)).toEqual(record);
  });

  it('given a full line of 5,000 callers (bench O), it holds under 40 bytes per caller, less than half the first form', () => {
    const limit: ModelLimit = { model: 'openai/fake-1', requestsPerMinute: 1 };
    let record = takeTicket(emptyLimitRecord(T0), limit, call('cap-000000:0', 'default'), T0).record;
    const line: NonNullable<LimitRecord['line']> = {};
    // As 5,000 joins at about 20 per second leave it: each sleeping (at most) 6 hours, its place kept 30 s after.
    for (let i = 1; i <= MAX_LINE; i++) {
      const since = T0 + i * 47;
      line[`cap-${String(i).padStart(6, '0')}:0`] = {
        tenant: 'default',
        priority: 0,
        since,
        until: since + Math.min(LINE_RECHECK_MAX_MS, i * 60_000) + QUEUE_GRACE_MS,
      };
    }
    record = { ...record, at: T0 + MAX_LINE * 47, line };
    const compact = encodeLimitRecord(record).length / MAX_LINE;
    const first = JSON.stringify(record).length / MAX_LINE;
    expect(compact).toBeLessThan(40);
    expect(compact).toBeLessThan(first / 2);
    expect(stored(record)).toEqual(record);
  });

  it('given something that is not a limit record, it says what it got, as a non-retryable error', () => {
    for (const bad of [
      null,
      [],
      { at: 'x' },
      { at: 1, v: 3 },
      { at: 1, levels: {} },
      { v: 2, at: 1, ln: { h: 5 } },
    ])
      expect(() => decodeLimitRecord(bad)).toThrow(
        expect.objectContaining({ code: 'flow_record_invalid', retryable: false }),
      );
    expect(() => decodeLimitRecord({ v: 2, at: 1, ln: { h: [0, 1, 3] }, tn: ['a'] })).toThrow(/tenant index/);
  });
});
