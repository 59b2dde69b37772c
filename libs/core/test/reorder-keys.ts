import type { JsonValue } from '@dura/contracts';

/**
 * The same JSON value with the keys of every object (at any depth) inserted in another order, chosen by `seed`.
 * Integer-like keys keep their numeric order in any JS object, so only the others really move.
 */
export function reorderKeys(value: JsonValue, seed: readonly number[], depth = 0): JsonValue {
  if (Array.isArray(value)) return value.map((item) => reorderKeys(item, seed, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  for (let i = entries.length - 1; i > 0; i -= 1) {
    const j = (seed[(i + depth) % Math.max(seed.length, 1)] ?? i + depth) % (i + 1);
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  return Object.fromEntries(entries.map(([key, item]) => [key, reorderKeys(item, seed, depth + 1)]));
}
