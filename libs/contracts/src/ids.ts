import * as z from 'zod';
import { scanJson } from './message-limits';

/** A run id is one NATS subject token: letters, digits, `_` and `-` only, so `dura.run.<runId>` is always valid. */
export const RunIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(
    /^[A-Za-z0-9_-]+$/,
    'run id may contain only letters, digits, "_" and "-" (it becomes a NATS subject token)',
  );

/** Tool names are dotted lower-case words, e.g. `http.request`; each dot-separated part is a subject token. */
export const ToolNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(
    /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)*$/,
    'tool name must be dotted lower-case words, e.g. "http.request"',
  );

/**
 * Any JSON value: a string, a finite number, a boolean, null, an array or a plain object of JSON values.
 * Checked by one walk over the value rather than as a recursive union of schemas, which cost zod several
 * times as much on every event, task and request decoded. Its JSON Schema is `{}`: every JSON document is
 * a JSON value.
 */
export const JsonValueSchema = z
  .unknown()
  // Required where a field holds it, as a JSON value always was (`unknown` alone would make the field optional).
  .nonoptional()
  .check((ctx) => {
    if (isJsonValue(ctx.value)) return;
    const bad = firstNonJson(ctx.value, []);
    ctx.issues.push({
      code: 'custom',
      message: `expected a JSON value, got ${bad.what}`,
      input: ctx.value,
      path: bad.path,
    });
  })
  .meta({ description: 'Any JSON value' }) as unknown as z.ZodType<JsonValue>;

function isJsonValue(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (const item of value as unknown[]) if (!isJsonValue(item)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) {
        if (Object.hasOwn(value, key) && !isJsonValue((value as Record<string, unknown>)[key])) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** Where a value that is not JSON (`isJsonValue` said so) goes wrong: the first offending part and its path. */
function firstNonJson(
  value: unknown,
  path: (string | number)[],
): { what: string; path: (string | number)[] } {
  if (typeof value === 'object' && value !== null) {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (Array.isArray(value)) {
      const at = (value as unknown[]).findIndex((item) => !isJsonValue(item));
      return firstNonJson(value[at], [...path, at]);
    }
    if (proto !== Object.prototype && proto !== null)
      return {
        what: `an instance of ${(value.constructor as { name?: string } | undefined)?.name ?? 'a class'}`,
        path,
      };
    const key = Object.keys(value).find((k) => !isJsonValue((value as Record<string, unknown>)[k])) as string;
    return firstNonJson((value as Record<string, unknown>)[key], [...path, key]);
  }
  if (typeof value === 'number') return { what: String(value), path };
  return { what: value === undefined ? 'undefined' : typeof value, path };
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export const JsonObjectSchema: z.ZodType<JsonObject> = z.record(z.string(), JsonValueSchema);

/** The valid `runId` of a JSON message body, if it has one: how dead letters of any message name their run. */
export function runIdInJson(text: string | Uint8Array): string | undefined {
  // A scan, not a parse: it finds the run id of a message too deep, too large or not JSON at all.
  return scanJson(typeof text === 'string' ? new TextEncoder().encode(text) : text).runId;
}
