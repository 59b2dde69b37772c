import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  ContractViolation,
  decodeMessage,
  decodeOrThrow,
  MESSAGE_LIMITS,
  RunRequestSchema,
  scanJson,
  valueLimitProblem,
  type MessageLimits,
} from '../src/index';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const limits = (overrides: Partial<MessageLimits>): MessageLimits => ({ ...MESSAGE_LIMITS, ...overrides });

/** Levels of arrays and objects in `value` (a scalar is 0), computed the obvious, recursive way. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

/** `[[[...]]]` or `{"a":{"a":...}}`, `levels` deep, built as text so no recursion ever touches it. */
function nested(levels: number, kind: 'array' | 'object', inner = '1'): string {
  return kind === 'array'
    ? `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`
    : `${'{"a":'.repeat(levels)}${inner}${'}'.repeat(levels)}`;
}

/** Nothing a reason holds breaks a store: no U+0000, no lone surrogate, a bounded length. */
function expectStorable(text: string): void {
  // eslint-disable-next-line no-control-regex -- U+0000 is what must not be there.
  expect(text).not.toMatch(/\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  expect(text.length).toBeLessThan(2_100);
}

const AnyJson = z.unknown();

describe('scanJson', () => {
  it('measures the nesting depth of any JSON value exactly as its structure has it', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 1, max: 8 }), (value, maxDepth) => {
        const problem = scanJson(encode(JSON.stringify(value)), limits({ maxDepth })).problem;
        expect(problem?.code === 'too_deep').toBe(depthOf(value) > maxDepth);
      }),
      { seed: 14, numRuns: 500 },
    );
  });

  it('counts array elements, object keys and string bytes against their limits', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom('array', 'object', 'string'),
        (size, limit, kind) => {
          const value =
            kind === 'array'
              ? Array.from({ length: size }, (_, i) => [i])
              : kind === 'object'
                ? Object.fromEntries(Array.from({ length: size }, (_, i) => [`k"${i}`, { v: ',:' }]))
                : 'é"'.repeat(size);
          const text = JSON.stringify({ wrap: [value] });
          const problem = scanJson(
            encode(text),
            limits({ maxArrayLength: limit, maxObjectKeys: limit + 1, maxStringBytes: limit * 4 }),
          ).problem;
          const over =
            kind === 'array'
              ? size > limit
              : kind === 'object'
                ? size + 1 > limit + 1
                : encode(JSON.stringify(value)).length - 2 > limit * 4;
          expect(problem !== undefined, `${kind} of ${size}, limit ${limit}: ${problem?.code}`).toBe(over);
          if (over)
            expect(problem?.code).toBe(
              { array: 'array_too_long', object: 'too_many_keys', string: 'string_too_long' }[kind],
            );
        },
      ),
      { seed: 15, numRuns: 500 },
    );
  });

  it('finds the top-level run id wherever it is, even behind a nesting far past the limit', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
        fc.dictionary(
          fc.string().filter((k) => k !== 'runId'),
          fc.jsonValue({ maxDepth: 3 }),
        ),
        fc.boolean(),
        (runId, rest, first) => {
          const body = first ? { runId, ...rest } : { ...rest, runId };
          expect(scanJson(encode(JSON.stringify(body))).runId).toBe(runId);
        },
      ),
      { seed: 16, numRuns: 300 },
    );
    const hostile = encode(`{"input":${nested(50_000, 'array')},"runId":"run-deep"}`);
    expect(scanJson(hostile)).toMatchObject({ runId: 'run-deep', problem: { code: 'too_deep' } });
  });

  it('takes no run id from a nested object, a key quoted as a value, or a value no run id can be', () => {
    expect(scanJson(encode('{"input":{"runId":"inner"}}')).runId).toBeUndefined();
    expect(scanJson(encode('{"note":"runId","x":"y"}')).runId).toBeUndefined();
    expect(scanJson(encode('["runId","x"]')).runId).toBeUndefined();
    expect(scanJson(encode('{"runId":"a b"}')).runId).toBeUndefined();
    expect(scanJson(encode('{"runId":"a\\u0041"}')).runId).toBeUndefined();
    expect(scanJson(encode('{"runId":"first","runId":"last"}')).runId).toBe('last');
  });

  it('scans a whole message at the byte limit in linear time and bounded memory', () => {
    const open = encode('['.repeat(MESSAGE_LIMITS.maxBytes));
    const started = performance.now();
    expect(scanJson(open).problem?.code).toBe('too_deep');
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('decodeMessage', () => {
  it.each([
    ['an array', 'array'],
    ['an object', 'object'],
  ] as const)('refuses %s nested thousands of levels deep before anything recursive runs', (_, kind) => {
    const bytes = encode(`{"runId":"r-1","input":${nested(5_000, kind)}}`);
    expect(bytes.length).toBeLessThan(40_000);
    const decoded = decodeMessage(bytes, RunRequestSchema, 'request');
    expect(decoded).toMatchObject({ ok: false, runId: 'r-1', failure: { code: 'too_deep' } });
  });

  it('refuses bytes that are not UTF-8, and quotes nothing of them', () => {
    const bytes = new Uint8Array([...encode('{"runId":"r-2","input":"'), 0xff, 0x00, 0xfe, ...encode('"}')]);
    const decoded = decodeMessage(bytes, AnyJson, 'request');
    expect(decoded).toMatchObject({ ok: false, runId: 'r-2', failure: { code: 'invalid_utf8' } });
    if (!decoded.ok) expectStorable(decoded.failure.message);
  });

  it('refuses a raw NUL (bad JSON) and an escaped one (unstorable) with reasons a store can keep', () => {
    const raw = decodeMessage(encode('{"runId":"r-3","input":"a\u0000b"}'), AnyJson, 'request');
    expect(raw).toMatchObject({ ok: false, runId: 'r-3', failure: { code: 'bad_json' } });
    if (!raw.ok) expectStorable(raw.failure.message);
    const escaped = decodeMessage(encode('{"runId":"r-3","input":"a\\u0000b"}'), AnyJson, 'request', {
      invalidCode: 'invalid_request',
    });
    expect(escaped).toMatchObject({ ok: false, failure: { code: 'invalid_request', issues: [/input/] } });
  });

  // 300 fixed-seed cases take about 3 s here; the limit leaves room for a machine three times slower.
  it(
    'never throws, and every reason it gives can be stored and shown, whatever the bytes',
    { timeout: 20_000 },
    () => {
      const hostileText = fc.oneof(
        fc.string({ unit: 'binary' }).map((s) => `{"runId":"r","input":"${s}`),
        fc.string({ unit: 'binary' }).map((s) => `{"runId":"r","input":${JSON.stringify(s)}}`),
        fc.integer({ min: 0, max: 3_000 }).map((n) => nested(n, 'array', '"\u0000"')),
      );
      fc.assert(
        fc.property(fc.oneof(fc.uint8Array({ maxLength: 300 }), hostileText.map(encode)), (bytes) => {
          const decoded = decodeMessage(bytes, RunRequestSchema, 'request');
          if (decoded.ok) return;
          expectStorable(decoded.failure.message);
          for (const issue of decoded.failure.issues) expectStorable(issue);
        }),
        { seed: 17, numRuns: 300 },
      );
    },
  );

  it('accepts a message within the limits as the schema decodes it', () => {
    const request = {
      v: 1,
      runId: 'r-ok',
      agent: { kind: 'scripted', steps: [] },
      input: nested(60, 'object'),
    };
    const decoded = decodeMessage(encode(JSON.stringify(request)), RunRequestSchema, 'request');
    expect(decoded).toMatchObject({ ok: true, runId: 'r-ok', value: { runId: 'r-ok' } });
  });

  it('throws a terminal ContractViolation naming the broken limit for a consumer loop', () => {
    const bytes = encode(nested(MESSAGE_LIMITS.maxDepth + 1, 'array'));
    let thrown: unknown;
    try {
      decodeOrThrow(bytes, AnyJson, 'decide task');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ContractViolation);
    expect(thrown).toMatchObject({ code: 'too_deep', retryable: false, message: /^decide task refused: / });
  });
});

describe('valueLimitProblem', () => {
  it('reports a value nested deeper than the call stack goes, and a cycle, without throwing', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i += 1) deep = { a: deep };
    expect(valueLimitProblem(deep)?.code).toBe('too_deep');
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    expect(valueLimitProblem(cycle)?.code).toBe('too_deep');
  });

  it('agrees with the scan of the value written as JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 1, max: 6 }), (value, maxDepth) => {
        const tight = limits({ maxDepth, maxArrayLength: 3, maxObjectKeys: 3, maxStringBytes: 8 });
        // Which problem comes first may differ (the value is checked for depth first); whether there is one may not.
        expect(valueLimitProblem(value, tight) === undefined).toBe(
          scanJson(encode(JSON.stringify(value)), tight).problem === undefined,
        );
      }),
      { seed: 18, numRuns: 500 },
    );
  });
});
