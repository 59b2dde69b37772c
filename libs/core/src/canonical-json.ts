import type { JsonValue } from '@dura/contracts';
import { DuraError } from '@dura/contracts';

/**
 * Canonical JSON (RFC 8785 style): object keys sorted by code unit, no whitespace, numbers as JavaScript prints them.
 * Two values that are equal as JSON give the same string, whatever their key order.
 */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new DuraError('not_json', `canonical JSON has no form for ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value !== 'object')
    throw new DuraError('not_json', `canonical JSON has no form for a ${typeof value}`);
  const keys = Object.keys(value)
    .filter((key) => value[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key] as JsonValue)}`).join(',')}}`;
}
