// The leaf rules of the comparison: which proto scalar may carry a zod number, and whether a
// string field's `one of:` comment lists exactly the values zod allows.
import type { Shape } from './zod-shape';

const INT32_TYPES: Record<string, 'signed' | 'unsigned'> = {
  int32: 'signed',
  sint32: 'signed',
  sfixed32: 'signed',
  uint32: 'unsigned',
  fixed32: 'unsigned',
};
const INT64_TYPES = ['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64'];

const WORDS: Record<Exclude<Shape['kind'], 'union' | 'unsupported' | 'nullable'>, string> = {
  object: 'an object',
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean',
  'json-value': 'any JSON value',
  'json-object': 'a JSON object',
  unknown: 'an unknown value',
  array: 'an array',
  map: 'a record',
};

/** A few words for a zod shape, for failure messages. */
export function describe(shape: Shape): string {
  if (shape.kind === 'union') return `a union on "${shape.discriminator}"`;
  if (shape.kind === 'unsupported') return shape.why;
  if (shape.kind === 'nullable') return `${describe(shape.inner)} or null`;
  return WORDS[shape.kind];
}

export const quoted = (values: readonly string[]): string => values.map((value) => `"${value}"`).join(', ');

export const sameSet = (a: readonly string[], b: readonly string[]): boolean =>
  new Set(a).size === new Set(b).size && new Set([...a, ...b]).size === new Set(a).size;

/** Why proto type `proto` cannot carry this zod number in JSON, or undefined when it can. */
export function numberProblem(shape: Extract<Shape, { kind: 'number' }>, proto: string): string | undefined {
  if (proto === 'double') return undefined;
  if (INT64_TYPES.includes(proto)) {
    return `${proto} is written as a JSON string by proto3, which zod's number rejects; use a 32-bit type or double`;
  }
  const sign = INT32_TYPES[proto];
  if (sign === undefined) return `zod has a number, so proto needs double or a 32-bit integer, not ${proto}`;
  if (!shape.int) return `zod allows fractions, so proto needs double, not ${proto}`;
  if (sign === 'unsigned' && !shape.nonNegative) {
    return `zod allows negative numbers, so proto needs a signed type, not ${proto}`;
  }
  return undefined;
}

/** Why a string field's listed values (from its comment) differ from the values zod allows, if they do. */
export function valuesProblem(
  allowed: readonly string[] | undefined,
  listed: readonly string[] | undefined,
): string | undefined {
  if (allowed === undefined) {
    return listed === undefined
      ? undefined
      : `comment lists one of: ${quoted(listed)}, zod accepts any string`;
  }
  if (listed === undefined) {
    return `zod allows only ${quoted(allowed)}; list them in the field's comment as one of: ${quoted(allowed)}`;
  }
  return sameSet(allowed, listed)
    ? undefined
    : `comment lists one of: ${quoted(listed)}; zod allows ${quoted(allowed)}`;
}
