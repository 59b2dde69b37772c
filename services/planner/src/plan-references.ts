import type { JsonValue } from '@dura/contracts';
import { isSecretEnvelope } from '@dura/tools';

const PLAN_REFERENCE = /^\$(?:steps\.\d+|input)(?:\.[^.]+)*$/;
const INPUT_REFERENCE = /^\$input((?:\.[^.]+)*)$/;

/** A plan reference (`"$input.card"`, `"$steps.0.id"`): resolved when the step runs, so never a secret itself. */
export const isReference = (value: JsonValue): boolean =>
  typeof value === 'string' && PLAN_REFERENCE.test(value);

/**
 * The input paths a secret field takes its value from: `card: "$input.card"` with secret path `card.token`
 * reads `card.token` of the input (`""`: the whole input).
 */
export function inputReferencesAlong(value: JsonValue, segments: readonly string[]): string[] {
  if (typeof value === 'string') {
    const match = INPUT_REFERENCE.exec(value);
    if (!match) return [];
    return [[...(match[1] ?? '').split('.').slice(1), ...segments].join('.')];
  }
  const [head, ...rest] = segments;
  if (head === undefined || value === null || typeof value !== 'object' || isSecretEnvelope(value)) return [];
  const items: JsonValue[] = Array.isArray(value)
    ? value.filter((_, index) => head === '*' || head === String(index))
    : head === '*'
      ? Object.values(value)
      : Object.hasOwn(value, head)
        ? [value[head] as JsonValue]
        : [];
  return items.flatMap((item) => inputReferencesAlong(item, rest));
}
