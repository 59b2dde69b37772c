import type { JsonValue } from '@dura/contracts';
import { UsageError, type ParsedArgs } from './command';

/** A string flag's value, or undefined when absent. */
export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const value = args.flags[name];
  if (Array.isArray(value)) return value.at(-1);
  return typeof value === 'string' ? value : undefined;
}

/** Every value of a repeatable flag; comma-separated values are split too (`--status a,b --status c`). */
export function listFlag(args: ParsedArgs, name: string): string[] {
  const value = args.flags[name];
  const raw = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  return raw.flatMap((v) => v.split(',')).filter((v) => v.length > 0);
}

export function booleanFlag(args: ParsedArgs, name: string): boolean {
  return args.flags[name] === true;
}

/** An integer flag checked against `min` (and `max`); a bad value is a UsageError (exit 2). */
export function intFlag(
  args: ParsedArgs,
  name: string,
  bounds: { min?: number; max?: number } = {},
): number | undefined {
  const raw = stringFlag(args, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  const min = bounds.min ?? 0;
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  if (!/^-?\d+$/.test(raw) || value < min || value > max)
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

/** A flag holding JSON text; invalid JSON is a UsageError naming the flag. */
export function jsonFlag(args: ParsedArgs, name: string): JsonValue | undefined {
  const raw = stringFlag(args, name);
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as JsonValue;
  } catch (err) {
    throw new UsageError(`--${name} is not valid JSON (${(err as Error).message}); quote it, e.g. '{"a":1}'`);
  }
}

/** An ISO-8601 timestamp flag, returned normalised; anything `Date` cannot read is a UsageError. */
export function isoFlag(args: ParsedArgs, name: string): string | undefined {
  const raw = stringFlag(args, name);
  if (raw === undefined) return undefined;
  const time = Date.parse(raw);
  if (Number.isNaN(time))
    throw new UsageError(`--${name} must be an ISO-8601 time such as 2025-01-31T12:00:00Z, got "${raw}"`);
  return new Date(time).toISOString();
}

/** The positional at `index` (the CLI already checked the count against the command's `positionals`). */
export function positional(args: ParsedArgs, index: number, what: string): string {
  const value = args.positionals[index];
  if (value === undefined) throw new UsageError(`missing ${what}`);
  return value;
}
