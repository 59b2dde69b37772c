import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { JsonObjectSchema, JsonValueSchema } from '../src/index';

const Holder = z.object({ value: JsonValueSchema });
const issuesOf = (value: unknown) => {
  const parsed = Holder.safeParse({ value });
  return parsed.success
    ? []
    : parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message }));
};

describe('JsonValueSchema', () => {
  it('accepts every JSON value, deep ones included, as it is', () => {
    const value = {
      s: 'x',
      n: -1.5e3,
      b: false,
      z: null,
      a: [1, 'two', [3], { four: 4 }],
      o: { deep: { er: [] } },
    };
    const parsed = Holder.parse({ value });
    expect(parsed.value).toEqual(value);
    expect(JsonValueSchema.parse(JSON.parse('{"__proto__":{"x":1}}'))).toEqual(
      JSON.parse('{"__proto__":{"x":1}}'),
    );
    expect(JsonValueSchema.parse(Object.assign(Object.create(null), { k: 1 }))).toEqual({ k: 1 });
  });

  it('refuses what JSON cannot hold, naming where it is', () => {
    expect(issuesOf([1, undefined])).toEqual([
      { path: ['value', 1], message: 'expected a JSON value, got undefined' },
    ]);
    expect(issuesOf({ a: [1, { b: Number.NaN }] })).toEqual([
      { path: ['value', 'a', 1, 'b'], message: 'expected a JSON value, got NaN' },
    ]);
    expect(issuesOf([Infinity])).toEqual([
      { path: ['value', 0], message: 'expected a JSON value, got Infinity' },
    ]);
    expect(issuesOf({ when: new Date(0) })).toEqual([
      { path: ['value', 'when'], message: 'expected a JSON value, got an instance of Date' },
    ]);
    expect(issuesOf({ f: () => 1 })).toEqual([
      { path: ['value', 'f'], message: 'expected a JSON value, got function' },
    ]);
    expect(issuesOf([1n])).toEqual([{ path: ['value', 0], message: 'expected a JSON value, got bigint' }]);
    expect(issuesOf(new Map())).toEqual([
      { path: ['value'], message: 'expected a JSON value, got an instance of Map' },
    ]);
  });

  it('is required where a field holds it: a missing or undefined field is refused', () => {
    expect(Holder.safeParse({}).success).toBe(false);
    expect(Holder.safeParse({ value: undefined }).success).toBe(false);
  });

  it('is any value in JSON Schema, since every JSON document is one (and JSON Schema can express it)', () => {
    const schema = z.toJSONSchema(z.object({ value: JsonValueSchema, rest: JsonObjectSchema }), {
      io: 'input',
    });
    expect(schema).toMatchObject({
      properties: {
        value: { description: 'Any JSON value' },
        rest: { type: 'object', additionalProperties: { description: 'Any JSON value' } },
      },
      required: ['value', 'rest'],
    });
  });
});
