import type { JsonObject, JsonValue } from '@dura/contracts';

/**
 * `value` as plain JSON, the form the log records and a replay gets back: bytes as base64 text, URLs and
 * dates as strings, `undefined` fields left out. A value that has no JSON form (a function, a symbol) is an
 * error naming where it was.
 */
export function jsonForm(value: unknown, path = '$'): JsonValue | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value instanceof Uint8Array) return base64(value);
  if (value instanceof URL) return value.href;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item, i) => jsonForm(item, `${path}[${i}]`) ?? null);
  if (typeof value === 'object') {
    const out: JsonObject = {};
    for (const [key, item] of Object.entries(value)) {
      const json = jsonForm(item, `${path}.${key}`);
      if (json !== undefined) out[key] = json;
    }
    return out;
  }
  throw new TypeError(`${path} is a ${typeof value}, which has no JSON form to record`);
}

/** `jsonForm` of an object. */
export function jsonObject(value: object): JsonObject {
  return jsonForm(value) as JsonObject;
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** A tool call's arguments as the model sent them (JSON text), as an object; text that is not one is kept as `{ input }`. */
export function toolArguments(input: string): JsonObject {
  try {
    const parsed: unknown = JSON.parse(input);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as JsonObject;
  } catch {
    // Not JSON: kept as text below.
  }
  return { input };
}
