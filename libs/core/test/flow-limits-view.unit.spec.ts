import { describe, expect, it } from 'vitest';
import {
  DECLARATION_FRESH_MS,
  emptyLimitRecord,
  limitCells,
  limitRows,
  takeSlot,
  takeTicket,
  throttled,
  type LimitRecord,
  type ModelLimit,
} from '../src/index';

const now = Date.parse('2026-11-29T10:00:00.000Z');
const mini: ModelLimit = { model: 'openai/gpt-4o-mini', requestsPerMinute: 60, concurrentCalls: 2 };
const perTenant: ModelLimit = { model: 'openai/gpt-4o-mini', tenant: '*', requestsPerMinute: 20 };
const call = (holder: string, tenant = 'acme') => ({ holder, inputTokens: 10, outputTokens: 10, tenant });

describe('limitRows: the shared records as operators read them', () => {
  it('a declared limit no call has used yet shows full, with its figures', () => {
    const { limits, warnings } = limitRows([], [{ limit: mini, at: now }], now);
    expect(warnings).toEqual([]);
    expect(limits).toEqual([
      {
        key: 'openai/gpt-4o-mini',
        kind: 'model',
        model: 'openai/gpt-4o-mini',
        declared: { requestsPerMinute: 60, concurrentCalls: 2 },
        available: { requests: 1 },
        slots: { inUse: 0, limit: 2 },
        waiting: { total: 0, queue: 0, line: 0, byTenant: {} },
      },
    ]);
  });

  it('admissions lower the rate, slots count while leased, waiting callers are counted by tenant', () => {
    let record: LimitRecord = emptyLimitRecord(now);
    // 58 admittable (2 s of headroom): 29 calls take half of it.
    for (let i = 0; i < 29; i++) record = takeTicket(record, mini, call(`r${i}:0`), now).record;
    record = takeSlot(record, mini, 'a:0', 60_000, now).record;
    record = takeSlot(record, mini, 'b:0', 60_000, now).record;
    record = takeSlot(record, mini, 'c:0', 60_000, now).record; // full: queued
    record = { ...record, line: { 'w:0': { tenant: 'beta', priority: 0, since: now, until: now + 60_000 } } };
    const [row] = limitRows([{ key: 'openai/gpt-4o-mini', record }], [{ limit: mini, at: now }], now).limits;
    expect(row?.available.requests).toBe(0.5);
    expect(row?.slots).toEqual({ inUse: 2, limit: 2 });
    expect(row?.waiting).toEqual({ total: 2, queue: 1, line: 1, byTenant: { beta: 1 } });
    expect(limitCells(row!)).toEqual([
      'openai/gpt-4o-mini',
      '60 req/min, 2 concurrent',
      'req 50%',
      '2/2',
      '2 (beta 1, 1 for a slot)',
      'no',
    ]);
  });

  it('a lease run out, a line entry gone stale and a throttle past its time no longer count', () => {
    let record = takeSlot(emptyLimitRecord(now), mini, 'a:0', 1_000, now).record;
    record = throttled(record, mini, 5_000, now);
    const later = limitRows([{ key: mini.model, record }], [{ limit: mini, at: now }], now + 2_000).limits[0];
    expect(later?.slots.inUse).toBe(0);
    // Nothing before Retry-After, the full rate a minute later.
    expect(later?.throttle?.until).toBe(new Date(now + 65_000).toISOString());
    const after = limitRows([{ key: mini.model, record }], [{ limit: mini, at: now }], now + 120_000)
      .limits[0];
    expect(after?.throttle).toBeUndefined();
  });

  it("a per-tenant (*) declaration names each tenant's record, and shows as `per tenant` until used", () => {
    const record = takeTicket(emptyLimitRecord(now), perTenant, call('r:0'), now).record;
    const unused = limitRows([], [{ limit: perTenant, at: now }], now).limits;
    expect(limitCells(unused[0]!)[0]).toBe('openai/gpt-4o-mini per tenant');
    const used = limitRows(
      [{ key: 'openai/gpt-4o-mini@acme', record }],
      [{ limit: perTenant, at: now }],
      now,
    );
    expect(used.limits).toHaveLength(1);
    expect(used.limits[0]).toMatchObject({ model: 'openai/gpt-4o-mini', tenant: 'acme' });
    expect(limitCells(used.limits[0]!)[0]).toBe('openai/gpt-4o-mini for tenant acme');
  });

  it('a concurrency key shows the limit its runs asked for', () => {
    const record = {
      ...takeSlot(emptyLimitRecord(now), { model: 'k', concurrentCalls: 1 }, 'run_1', 60_000, now).record,
      keyLimit: 1,
    };
    const [row] = limitRows([{ key: 'key:customer:42', record }], [], now).limits;
    expect(limitCells(row!)).toEqual(['concurrency key customer:42', '1 at once', '-', '1/1', '0', 'no']);
  });

  it('replicas declaring different figures is a warning; a declaration not refreshed for long is not counted', () => {
    const other = { ...mini, requestsPerMinute: 120 };
    const both = limitRows(
      [],
      [
        { limit: mini, at: now },
        { limit: other, at: now - 1000 },
      ],
      now,
    );
    expect(both.warnings).toHaveLength(1);
    expect(both.warnings[0]).toMatch(/replicas declare different limits for openai\/gpt-4o-mini/);
    expect(both.limits[0]?.declared?.requestsPerMinute).toBe(60);
    const stale = limitRows(
      [],
      [
        { limit: mini, at: now },
        { limit: other, at: now - DECLARATION_FRESH_MS - 1 },
      ],
      now,
    );
    expect(stale.warnings).toEqual([]);
  });

  it('a record no planner declares shows its state, marked not declared', () => {
    const record = takeSlot(emptyLimitRecord(now), mini, 'a:0', 60_000, now).record;
    const [row] = limitRows([{ key: 'openai/gpt-4o', record }], [], now).limits;
    expect(row?.declared).toBeUndefined();
    expect(limitCells(row!).slice(0, 4)).toEqual(['openai/gpt-4o', 'not declared', '-', '1']);
  });
});
