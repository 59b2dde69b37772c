// The rules for when a field may be absent or null: required-ness (also per union variant, through
// `(dura.v1.required_in)`) and zod's `.nullable()` carried by a `google.protobuf.Value`.
import type protobuf from 'protobufjs';
import { isRequired, listedValues, nullableOf, requiredIn, typeName, variantOf } from './proto-fields';
import { describe, numberProblem, valuesProblem } from './scalar-rules';
import type { Shape } from './zod-shape';

/** Why a field's required-ness differs from zod's, in variant `kind` of a union if given; else undefined. */
export function requirednessProblem(
  zodRequired: boolean,
  field: protobuf.FieldBase,
  kind?: string,
): string | undefined {
  const collection = field.repeated || field.map;
  if (kind !== undefined && requiredIn(field).includes(kind)) {
    return zodRequired
      ? undefined
      : `zod lets it be absent, proto requires it (drop "${kind}" from (dura.v1.required_in))`;
  }
  if (zodRequired === isRequired(field)) return undefined;
  if (!zodRequired) {
    const fix = collection ? '(dura.v1.omittable) = true' : '`optional`';
    return `zod lets it be absent, proto requires it (add ${fix})`;
  }
  if (collection) return 'zod requires it, proto lets it be absent (drop (dura.v1.omittable) = true)';
  return kind === undefined
    ? 'zod requires it, proto lets it be absent (drop `optional`)'
    : `zod requires it, proto lets it be absent (drop \`optional\`, or add "${kind}" to (dura.v1.required_in))`;
}

/** `(dura.v1.required_in)` belongs on an `optional` singular field of a union and names its variants. */
export function requiredInProblems(field: protobuf.FieldBase, kinds: readonly string[]): string[] {
  const listed = requiredIn(field);
  if (listed.length === 0) return [];
  const problems: string[] = [];
  if (field.repeated || field.map || isRequired(field)) {
    problems.push('(dura.v1.required_in) is for `optional` singular fields');
  }
  const variant = variantOf(field);
  for (const kind of listed) {
    if (!kinds.includes(kind))
      problems.push(`(dura.v1.required_in) names "${kind}", which zod does not have`);
    else if (variant !== undefined && variant !== kind) {
      problems.push(`(dura.v1.required_in) names "${kind}", but the field belongs to variant "${variant}"`);
    }
  }
  return problems;
}

/**
 * Why a field cannot carry zod's `inner.nullable()`: proto3 JSON writes null only for a
 * `google.protobuf.Value`, so the field is one, marked `(dura.v1.nullable)` with the scalar it holds.
 */
export function nullableProblems(inner: Shape, field: protobuf.FieldBase): string[] {
  const holds = nullableOf(field);
  if (typeName(field) !== '.google.protobuf.Value' || holds === undefined) {
    return [
      `zod has ${describe(inner)} or null; proto3 JSON writes null only for a google.protobuf.Value, so make it one marked (dura.v1.nullable) = "<scalar type>"`,
    ];
  }
  const scalar = (wanted: string): string[] =>
    holds === wanted
      ? []
      : [`zod has ${describe(inner)} or null, so (dura.v1.nullable) needs "${wanted}", not "${holds}"`];
  const defined = (problem: string | undefined): string[] => (problem === undefined ? [] : [problem]);
  switch (inner.kind) {
    case 'string':
      return [...scalar('string'), ...defined(valuesProblem(inner.values, listedValues(field)))];
    case 'number':
      return defined(numberProblem(inner, holds));
    case 'boolean':
      return scalar('bool');
    default:
      return [
        `zod has ${describe(inner)} or null; (dura.v1.nullable) covers only strings, numbers and booleans`,
      ];
  }
}
