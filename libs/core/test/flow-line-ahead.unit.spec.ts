import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aheadInLine, lineOrder, type LimitRecord, type ModelLimit } from '../src/index';

describe('model limits: how many callers in line go first', () => {
  it('given any line (tenants, weights, priorities, shares), it counts as ordering the whole line does (property)', () => {
    const tenant = fc.constantFrom('default', 'a', 'b', 'c');
    const entry = fc.record({
      tenant,
      priority: fc.integer({ min: -1, max: 2 }),
      since: fc.integer({ min: 0, max: 20 }),
      until: fc.constant(1_000_000),
    });
    const shares = fc.record(
      {
        served: fc.dictionary(
          tenant,
          fc.oneof(fc.integer({ min: 0, max: 6 }), fc.double({ min: 0, max: 6, noNaN: true })),
        ),
        virtual: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.double({ min: 0, max: 6, noNaN: true })),
      },
      { requiredKeys: [] },
    );
    const weights = fc.dictionary(tenant, fc.constantFrom(0.5, 1, 2, 3, 0.3, 0));
    const holder = fc.constantFrom('h0', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7', 'h8', 'h9', 'new');
    fc.assert(
      fc.property(
        fc.dictionary(holder, entry),
        shares,
        weights,
        holder,
        tenant,
        fc.integer({ min: -1, max: 2 }),
        (line, share, w, who, t, priority) => {
          const limit: ModelLimit = { model: 'm', requestsPerMinute: 1, weights: w };
          const record: LimitRecord = { at: 0, levels: {}, slots: {}, queue: {}, line, ...share };
          const call = { holder: who, inputTokens: 0, outputTokens: 0, tenant: t, priority };
          const mine = line[who] ?? { tenant: t, priority, since: Number.MAX_SAFE_INTEGER, until: 0 };
          const weight = (name: string) => Math.max(0.001, w[name] ?? 1);
          const expected = lineOrder({ ...line, [who]: mine }, record, weight).indexOf(who);
          expect(aheadInLine(record, limit, call)).toBe(Object.keys(line).length === 0 ? 0 : expected);
        },
      ),
      { numRuns: 3_000 },
    );
  });
});
