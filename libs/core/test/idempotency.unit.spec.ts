import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import type { JsonObject } from '@dura/contracts';
import { argsHash, callId, canonicalJson, decisionEventId, idempotencyKey, sha256Hex } from '../src/index';
import { arbArgs, arbJsonValue, arbRunId } from '../src/testing';
import { reorderKeys } from './reorder-keys';

const arbParts = fc.record({
  runId: arbRunId(),
  step: fc.integer({ min: 1, max: 10_000 }),
  tool: fc.constantFrom('http.request', 'mail.send', 'deploy.service', 'stripe.charge'),
  args: arbArgs(),
});

/** Deeply nested arguments, so key order is exercised below the top level too. */
const arbDeepArgs = fc.dictionary(fc.string({ maxLength: 6 }), arbJsonValue(4), {
  maxKeys: 6,
  noNullPrototype: true,
});

describe('idempotencyKey', () => {
  it('is run:step:tool:hash, with the first 32 hex of the args hash', () => {
    const args = { to: 'ana@example.com', subject: 'Invoice 42' };
    const key = idempotencyKey({ runId: 'run-1', step: 3, tool: 'mail.send', args });
    expect(key).toMatch(/^run-1:3:mail\.send:[0-9a-f]{32}$/);
    expect(key.endsWith(argsHash(args).slice(0, 32))).toBe(true);
  });

  it('hashes the canonical JSON with SHA-256 (known vector for {})', () => {
    expect(argsHash({})).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
    fc.assert(
      fc.property(arbDeepArgs, (args) => {
        expect(argsHash(args)).toBe(createHash('sha256').update(canonicalJson(args), 'utf8').digest('hex'));
      }),
    );
  });

  it('is deterministic', () => {
    fc.assert(
      fc.property(arbParts, (parts) => {
        expect(idempotencyKey(parts)).toBe(idempotencyKey(structuredClone(parts)));
      }),
    );
  });

  it('does not depend on the key order of the args, at any depth', () => {
    const a = { amount: { value: 1200, currency: 'EUR' }, customer: 'cus_1', items: [{ sku: 'a', qty: 1 }] };
    const b = { items: [{ qty: 1, sku: 'a' }], customer: 'cus_1', amount: { currency: 'EUR', value: 1200 } };
    const parts = { runId: 'run-1', step: 1, tool: 'stripe.charge' };
    expect(idempotencyKey({ ...parts, args: a })).toBe(idempotencyKey({ ...parts, args: b }));
    fc.assert(
      fc.property(arbParts, arbDeepArgs, fc.array(fc.nat(), { minLength: 1 }), (p, args, seed) => {
        const shuffled = reorderKeys(args, seed) as JsonObject;
        expect(idempotencyKey({ ...p, args: shuffled })).toBe(idempotencyKey({ ...p, args }));
      }),
      { numRuns: 300 },
    );
  });

  it('changes with the run, the step, the tool and the args', () => {
    fc.assert(
      fc.property(arbParts, arbParts, (p, q) => {
        const key = idempotencyKey(p);
        if (p.runId !== q.runId) expect(idempotencyKey({ ...p, runId: q.runId })).not.toBe(key);
        if (p.step !== q.step) expect(idempotencyKey({ ...p, step: q.step })).not.toBe(key);
        if (p.tool !== q.tool) expect(idempotencyKey({ ...p, tool: q.tool })).not.toBe(key);
        if (canonicalJson(p.args) !== canonicalJson(q.args)) {
          expect(idempotencyKey({ ...p, args: q.args })).not.toBe(key);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('tells apart args that differ only in value type or nesting', () => {
    const key = (args: JsonObject) => idempotencyKey({ runId: 'r', step: 1, tool: 'http.request', args });
    const variants: JsonObject[] = [
      { n: 1 },
      { n: '1' },
      { n: [1] },
      { n: { v: 1 } },
      { n: null },
      { n: true },
      {},
    ];
    expect(new Set(variants.map(key)).size).toBe(variants.length);
  });

  it('shuffling really reorders keys (the property above is not vacuous)', () => {
    const value = { a: 1, b: 2, c: 3, d: { x: 1, y: 2, z: 3 } };
    const orders = [[0], [1], [2], [5, 3]].map((seed) => JSON.stringify(reorderKeys(value, seed)));
    expect(new Set(orders).size).toBeGreaterThan(1);
  });
});

describe('ids of decisions and calls', () => {
  it('numbers decision events after the sequence they were decided on', () => {
    expect(decisionEventId('run-1', 41, 0)).toBe('run-1@41.0');
    expect(decisionEventId('run-1', 41, 2)).toBe('run-1@41.2');
  });

  it('names calls by their step, so a replayed decision reuses them', () => {
    expect(callId(1)).toBe('call-1');
    expect(callId(12)).toBe('call-12');
  });
});

describe('sha256Hex', () => {
  // The console's browser build has no node:crypto and hashes with @noble/hashes: both must agree.
  const portable = (text: string) => bytesToHex(sha256(utf8ToBytes(text)));
  it("gives Node's hash and the portable one the same digest, for any text (lone surrogates included)", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' })),
        (text) => {
          expect(sha256Hex(text)).toBe(portable(text));
          expect(sha256Hex(text)).toBe(createHash('sha256').update(text).digest('hex'));
        },
      ),
    );
    for (const text of ['\ud800', 'a\udc00b', '\u0000', 'é😀', canonicalJson({ b: [1, 'x'], a: null })])
      expect(portable(text)).toBe(createHash('sha256').update(text).digest('hex'));
  });
});
