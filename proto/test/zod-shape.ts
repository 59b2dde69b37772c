// Reads a zod 4 schema into a small shape the contract comparison understands. Anything it does
// not know becomes `unsupported`, so a new kind of zod schema fails the test instead of passing it.
import type { z } from 'zod';
import { JsonObjectSchema, JsonValueSchema } from '@dura/contracts';

export type ObjectShape = { kind: 'object'; fields: Record<string, FieldShape> };
export type UnionShape = { kind: 'union'; discriminator: string; variants: Record<string, ObjectShape> };
export type Shape =
  | ObjectShape
  | UnionShape
  | { kind: 'string'; values?: readonly string[] }
  | { kind: 'number'; int: boolean; nonNegative: boolean; literal?: number }
  | { kind: 'boolean' }
  | { kind: 'json-value' }
  | { kind: 'json-object' }
  | { kind: 'unknown' }
  | { kind: 'array'; element: Shape }
  | { kind: 'map'; value: Shape }
  | { kind: 'nullable'; inner: Shape }
  | { kind: 'unsupported'; why: string };
export type FieldShape = { shape: Shape; required: boolean };

type AnySchema = z.core.$ZodType;

/** The shape of one zod schema; optional wrappers are unwrapped by `fieldShape`, not here. */
export function zodShape(schema: AnySchema): Shape {
  // Identity first: these two are recursive and stand for google.protobuf.Value and Struct.
  if (schema === JsonValueSchema) return { kind: 'json-value' };
  if (schema === JsonObjectSchema) return { kind: 'json-object' };
  const def = (schema as z.core.$ZodTypes)._zod.def;
  switch (def.type) {
    case 'string':
      return { kind: 'string' };
    case 'boolean':
      return { kind: 'boolean' };
    case 'unknown':
      return { kind: 'unknown' };
    case 'number':
      return numberShape(def);
    case 'enum':
      return { kind: 'string', values: Object.values(def.entries).map(String) };
    case 'literal':
      return literalShape(def.values);
    case 'array':
      return { kind: 'array', element: zodShape(def.element) };
    case 'record':
      if (def.valueType === JsonValueSchema) return { kind: 'json-object' };
      if ((def.keyType as z.core.$ZodTypes)._zod.def.type !== 'string') {
        return { kind: 'unsupported', why: 'a record whose keys are not plain strings' };
      }
      return { kind: 'map', value: zodShape(def.valueType) };
    case 'object':
      return objectShape(def.shape);
    case 'union':
      return unionShape(
        def.options,
        'discriminator' in def ? (def as z.core.$ZodDiscriminatedUnionDef).discriminator : undefined,
      );
    case 'optional':
      return { kind: 'unsupported', why: 'an optional value outside an object field' };
    case 'nullable':
      return { kind: 'nullable', inner: zodShape(def.innerType) };
    case 'pipe':
      // A preprocess (a check or a clearer message before the schema) leaves the wire shape to its output.
      if ((def.in as z.core.$ZodTypes)._zod.def.type === 'transform') return zodShape(def.out);
      return { kind: 'unsupported', why: 'a pipe that is not a preprocess' };
    default:
      return { kind: 'unsupported', why: `zod type "${def.type}" has no proto mapping` };
  }
}

/** A field may be absent exactly when zod would accept the object without its key. */
export function fieldShape(schema: AnySchema): FieldShape {
  const required = schema._zod.optin !== 'optional';
  const def = (schema as z.core.$ZodTypes)._zod.def;
  const inner = def.type === 'optional' ? def.innerType : schema;
  return { shape: zodShape(inner), required };
}

export function objectShape(shape: Record<string, AnySchema>): ObjectShape {
  const fields: Record<string, FieldShape> = {};
  for (const [name, schema] of Object.entries(shape)) fields[name] = fieldShape(schema);
  return { kind: 'object', fields };
}

function unionShape(options: readonly AnySchema[], discriminator: string | undefined): Shape {
  if (discriminator === undefined) return { kind: 'unsupported', why: 'a union without a discriminator' };
  const variants: Record<string, ObjectShape> = {};
  for (const option of options) {
    const variant = zodShape(option);
    if (variant.kind !== 'object')
      return { kind: 'unsupported', why: 'a union variant that is not an object' };
    const tag = variant.fields[discriminator]?.shape;
    if (tag?.kind !== 'string' || tag.values === undefined) {
      return { kind: 'unsupported', why: `a union variant without a literal "${discriminator}"` };
    }
    for (const value of tag.values) variants[value] = variant;
  }
  return { kind: 'union', discriminator, variants };
}

function literalShape(values: readonly unknown[]): Shape {
  if (values.every((value): value is string => typeof value === 'string')) return { kind: 'string', values };
  const [value] = values;
  if (values.length === 1 && typeof value === 'number') {
    return { kind: 'number', int: Number.isInteger(value), nonNegative: value >= 0, literal: value };
  }
  return { kind: 'unsupported', why: 'a literal that is neither strings nor one number' };
}

function numberShape(def: z.core.$ZodNumberDef): Shape {
  let int = false;
  let nonNegative = false;
  for (const check of def.checks ?? []) {
    const checkDef = (check as z.core.$ZodChecks)._zod.def;
    if (checkDef.check === 'number_format') int ||= ['safeint', 'int32', 'uint32'].includes(checkDef.format);
    if (checkDef.check === 'greater_than') nonNegative ||= Number(checkDef.value) >= 0;
  }
  return { kind: 'number', int, nonNegative };
}
