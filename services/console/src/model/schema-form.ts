/**
 * A form from a JSON Schema (an agent's input schema, as `z.toJSONSchema` writes it): strings, numbers,
 * integers, booleans, enums and nested objects become fields; anything else (arrays, unions, no schema at
 * all) a raw JSON field. Pure: the start-run form renders `FormField`s and turns a draft into the run's input.
 */
import type { JsonValue } from '@dura/contracts';

interface Common {
  /** Dotted path from the input's root ('' for the root itself): where an error is shown. */
  path: string;
  label: string;
  description?: string;
  required: boolean;
  /** Left empty, the field is `null` (a nullable field) rather than missing. */
  nullable?: boolean;
}
export type FormField = Common &
  (
    | { kind: 'string'; minLength?: number; maxLength?: number; pattern?: string; default?: string }
    | {
        kind: 'number';
        integer: boolean;
        minimum?: number;
        maximum?: number;
        exclusiveMinimum?: number;
        exclusiveMaximum?: number;
        default?: number;
      }
    | { kind: 'boolean'; default?: boolean }
    | { kind: 'enum'; options: JsonValue[]; default?: JsonValue }
    | { kind: 'object'; fields: FormField[] }
    | { kind: 'json'; default?: JsonValue }
  );

/** What the user has typed: text for strings, numbers, enums (the option's index) and JSON; nested drafts for objects. */
export type Draft = string | boolean | { [key: string]: Draft };

type Schema = Record<string, unknown>;
const isSchema = (value: unknown): value is Schema =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** `anyOf: [X, {type: "null"}]` or `type: [X, "null"]` (a nullable field): X, and that null is allowed. */
function withoutNull(schema: Schema): { schema: Schema; nullable: boolean } {
  const type = schema['type'];
  if (Array.isArray(type) && type.includes('null')) {
    const rest = type.filter((t) => t !== 'null');
    return { schema: { ...schema, type: rest.length === 1 ? rest[0] : rest }, nullable: true };
  }
  const anyOf = schema['anyOf'];
  if (!Array.isArray(anyOf)) return { schema, nullable: false };
  const rest = anyOf.filter((s) => !(isSchema(s) && s['type'] === 'null'));
  if (rest.length !== 1 || rest.length === anyOf.length || !isSchema(rest[0]))
    return { schema, nullable: false };
  const { anyOf: _anyOf, ...outer } = schema;
  return { schema: { ...outer, ...rest[0] }, nullable: true };
}

/** The form of `schema` (undefined: the agent declares none, so its input is raw JSON). */
export function formOf(schema: unknown, path = '', label = 'input', required = true): FormField {
  const common: Common = { path, label, required };
  if (!isSchema(schema)) return { ...common, kind: 'json' };
  const { schema: s, nullable } = withoutNull(schema);
  const title = typeof s['title'] === 'string' ? s['title'] : undefined;
  const description = typeof s['description'] === 'string' ? s['description'] : title;
  const base: Common = {
    ...common,
    ...(description ? { description } : {}),
    ...(nullable ? { nullable: true } : {}),
  };
  const fallback = (): FormField => ({
    ...base,
    kind: 'json',
    ...('default' in s ? { default: s['default'] as JsonValue } : {}),
  });
  const options = Array.isArray(s['enum'])
    ? (s['enum'] as JsonValue[])
    : 'const' in s
      ? [s['const'] as JsonValue]
      : undefined;
  if (options && options.length > 0)
    return {
      ...base,
      kind: 'enum',
      options,
      ...('default' in s ? { default: s['default'] as JsonValue } : {}),
    };
  switch (s['type']) {
    case 'string':
      return {
        ...base,
        kind: 'string',
        ...(num(s['minLength']) === undefined ? {} : { minLength: num(s['minLength']) }),
        ...(num(s['maxLength']) === undefined ? {} : { maxLength: num(s['maxLength']) }),
        ...(typeof s['pattern'] === 'string' ? { pattern: s['pattern'] } : {}),
        ...(typeof s['default'] === 'string' ? { default: s['default'] } : {}),
      };
    case 'number':
    case 'integer': {
      const bounds = Object.fromEntries(
        (['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const).flatMap((key) =>
          num(s[key]) === undefined ? [] : [[key, num(s[key])]],
        ),
      );
      return {
        ...base,
        kind: 'number',
        integer: s['type'] === 'integer',
        ...bounds,
        ...(num(s['default']) === undefined ? {} : { default: num(s['default']) }),
      };
    }
    case 'boolean':
      return {
        ...base,
        kind: 'boolean',
        ...(typeof s['default'] === 'boolean' ? { default: s['default'] } : {}),
      };
    case 'object': {
      const properties = s['properties'];
      if (!isSchema(properties) || isSchema(s['additionalProperties'])) return fallback();
      const needed = new Set(Array.isArray(s['required']) ? (s['required'] as string[]) : []);
      const fields = Object.entries(properties).map(([name, inner]) =>
        formOf(inner, path === '' ? name : `${path}.${name}`, name, needed.has(name)),
      );
      return { ...base, kind: 'object', fields };
    }
    default:
      return fallback();
  }
}

/** The draft a fresh form starts with: each field's default, or empty. */
export function initialDraft(field: FormField): Draft {
  switch (field.kind) {
    case 'object':
      return Object.fromEntries(field.fields.map((f) => [f.label, initialDraft(f)]));
    case 'boolean':
      return field.default ?? false;
    case 'enum': {
      const at =
        field.default === undefined
          ? -1
          : field.options.findIndex((o) => JSON.stringify(o) === JSON.stringify(field.default));
      return at < 0 ? (field.required && field.options.length === 1 ? '0' : '') : String(at);
    }
    case 'json':
      return field.default === undefined ? '' : JSON.stringify(field.default, null, 2);
    default:
      return field.default === undefined ? '' : String(field.default);
  }
}

/** Errors by field path; empty when the draft is a valid input. */
export type FormErrors = Record<string, string>;

/** The run's input the draft stands for, or the errors that keep it from being one. */
export function inputOf(field: FormField, draft: Draft): { input?: JsonValue; errors: FormErrors } {
  const errors: FormErrors = {};
  const input = valueOf(field, draft, errors);
  return { ...(input === undefined ? {} : { input }), errors };
}

function valueOf(field: FormField, draft: Draft, errors: FormErrors): JsonValue | undefined {
  const fail = (message: string) => {
    errors[field.path] = message;
    return undefined;
  };
  if (field.kind === 'object') {
    const drafts = typeof draft === 'object' ? draft : {};
    const out: Record<string, JsonValue> = {};
    for (const inner of field.fields) {
      const value = valueOf(inner, drafts[inner.label] ?? initialDraft(inner), errors);
      if (value !== undefined) out[inner.label] = value;
    }
    return out;
  }
  if (field.kind === 'boolean') return draft === true;
  const text = typeof draft === 'string' ? draft : '';
  if (text.trim() === '') return field.nullable ? null : field.required ? fail('required') : undefined;
  switch (field.kind) {
    case 'string':
      if (field.minLength !== undefined && text.length < field.minLength)
        return fail(`at least ${field.minLength} characters`);
      if (field.maxLength !== undefined && text.length > field.maxLength)
        return fail(`at most ${field.maxLength} characters`);
      if (field.pattern !== undefined && !safeTest(field.pattern, text))
        return fail(`must match ${field.pattern}`);
      return text;
    case 'number': {
      const value = Number(text);
      if (!Number.isFinite(value)) return fail('not a number');
      if (field.integer && !Number.isInteger(value)) return fail('must be a whole number');
      if (field.minimum !== undefined && value < field.minimum) return fail(`at least ${field.minimum}`);
      if (field.maximum !== undefined && value > field.maximum) return fail(`at most ${field.maximum}`);
      if (field.exclusiveMinimum !== undefined && value <= field.exclusiveMinimum)
        return fail(`more than ${field.exclusiveMinimum}`);
      if (field.exclusiveMaximum !== undefined && value >= field.exclusiveMaximum)
        return fail(`less than ${field.exclusiveMaximum}`);
      return value;
    }
    case 'enum': {
      const option = field.options[Number(text)];
      return option === undefined ? fail('choose one of the options') : option;
    }
    case 'json':
      try {
        return JSON.parse(text) as JsonValue;
      } catch (err) {
        return fail(`not valid JSON: ${(err as Error).message}`);
      }
  }
}

function safeTest(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(text);
  } catch {
    return true;
  }
}

/** Sets the draft at `path` (a field's path) to `value`, leaving the rest as it is. */
export function setDraft(root: Draft, path: string, value: Draft): Draft {
  if (path === '') return value;
  const [head, ...rest] = path.split('.') as [string, ...string[]];
  const object = typeof root === 'object' ? root : {};
  return { ...object, [head]: setDraft(object[head] ?? '', rest.join('.'), value) };
}

/** The draft at `path`. */
export function draftAt(root: Draft, path: string): Draft | undefined {
  if (path === '') return root;
  let at: Draft | undefined = root;
  for (const part of path.split('.')) at = typeof at === 'object' ? at[part] : undefined;
  return at;
}
