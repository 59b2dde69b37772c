/**
 * How a limit's record is stored in its KV entry (pure, no I/O). The line can hold thousands of callers and
 * every admission reads and writes the record whole, so it is kept compact: short field names, each waiter a
 * tuple, tenants named once in a table, and times in integer ms relative to `at`. A record stored in the
 * first form (the `LimitRecord` itself as JSON) still reads.
 *
 * Stored form, version 2 (every field but `v` and `at` left out when empty):
 * `{ v: 2, at, lv: { r, i, o }, tn: [tenant…], sl: { slot: until }, q: { holder: [since, until, tenant?,
 * priority?] }, ln: { holder: [since, until, tenant?, priority?, woken?] }, th: [factor, until], sv, vt, kl,
 * ss }`. In `ln`, a missing tenant is `tn[0]`, a missing priority 0; in `q`, missing (or null) is absent.
 */
import { DuraError } from '@dura/contracts';
import type { LimitRecord, LineEntry, Rate, SlotWaiter } from './flow-limits';

/** The version of the compact form; a record without `v` is in the first form. */
export const LIMIT_RECORD_VERSION = 2;

type Tuple = (number | null)[];

interface StoredRecord {
  v: 2;
  at: number;
  lv?: Partial<Record<'r' | 'i' | 'o', number>>;
  tn?: string[];
  sl?: Record<string, number>;
  q?: Record<string, Tuple>;
  ln?: Record<string, Tuple>;
  th?: [number, number];
  sv?: Record<string, number>;
  vt?: number;
  kl?: number;
  ss?: LimitRecord['slotShares'];
}

const RATE_FIELDS: readonly [Rate, 'r' | 'i' | 'o'][] = [
  ['requests', 'r'],
  ['input', 'i'],
  ['output', 'o'],
];

/** A time that is not exact relative to `at` (not an integer ms): the record is stored in the first form. */
class NotCompact extends Error {}

/** The text of `record` for its KV entry: the compact form, or the first form if a time is not whole ms. */
export function encodeLimitRecord(record: LimitRecord): string {
  try {
    return compactText(record);
  } catch (err) {
    if (err instanceof NotCompact) return JSON.stringify(record);
    throw err;
  }
}

/** The compact form, written out directly: the line is most of the record, and is written once, as text. */
function compactText(record: LimitRecord): string {
  const at = record.at;
  const rel = (time: number): number => {
    const offset = time - at;
    if (!Number.isInteger(offset) || at + offset !== time) throw new NotCompact();
    return offset;
  };
  const tenants = new Map<string, number>();
  const tenantIndex = (tenant: string): number => {
    let index = tenants.get(tenant);
    if (index === undefined) tenants.set(tenant, (index = tenants.size));
    return index;
  };
  const fields = [`"v":${LIMIT_RECORD_VERSION}`, `"at":${number(at)}`];
  const levels: StoredRecord['lv'] = {};
  for (const [rate, field] of RATE_FIELDS)
    if (record.levels[rate] !== undefined) levels[field] = record.levels[rate];
  if (Object.keys(levels).length > 0) fields.push(`"lv":${JSON.stringify(levels)}`);
  const line = record.line;
  if (line !== undefined) {
    // The line's first tenant is index 0, which its tuples leave out.
    for (const holder in line) {
      tenantIndex((line[holder] as LineEntry).tenant);
      break;
    }
    fields.push(
      `"ln":${mapText(line, (entry) => {
        const tenant = tenantIndex(entry.tenant);
        const priority = number(entry.priority);
        const times = `${rel(entry.since)},${rel(entry.until)}`;
        if (entry.woken !== undefined) return `[${times},${tenant},${priority},${rel(entry.woken)}]`;
        if (priority !== 0) return `[${times},${tenant},${priority}]`;
        return tenant !== 0 ? `[${times},${tenant}]` : `[${times}]`;
      })}`,
    );
  }
  if (Object.keys(record.slots).length > 0)
    fields.push(`"sl":${mapText(record.slots, (until) => String(rel(until)))}`);
  if (Object.keys(record.queue).length > 0)
    fields.push(
      `"q":${mapText(record.queue, (waiter) => {
        const times = `${rel(waiter.since)},${rel(waiter.until)}`;
        const tenant = waiter.tenant === undefined ? 'null' : tenantIndex(waiter.tenant);
        if (waiter.priority !== undefined) return `[${times},${tenant},${number(waiter.priority)}]`;
        return waiter.tenant !== undefined ? `[${times},${tenant}]` : `[${times}]`;
      })}`,
    );
  if (tenants.size > 0) fields.push(`"tn":${JSON.stringify([...tenants.keys()])}`);
  if (record.throttle) fields.push(`"th":[${number(record.throttle.factor)},${rel(record.throttle.until)}]`);
  const rest: Pick<StoredRecord, 'sv' | 'vt' | 'kl' | 'ss'> = {
    sv: record.served,
    vt: record.virtual,
    kl: record.keyLimit,
    ss: record.slotShares,
  };
  const tail = JSON.stringify(rest);
  return `{${fields.join(',')}${tail === '{}' ? '' : `,${tail.slice(1, -1)}`}}`;
}

/** `{"name":value,…}`, each value's JSON text given by `valueOf`. */
function mapText<T>(map: Record<string, T>, valueOf: (value: T) => string): string {
  const parts: string[] = [];
  for (const name of Object.keys(map)) parts.push(`${JSON.stringify(name)}:${valueOf(map[name] as T)}`);
  return `{${parts.join(',')}}`;
}

/** A number as JSON writes it; one JSON cannot write (NaN, infinite) leaves the record in the first form. */
function number(value: number): number {
  if (!Number.isFinite(value)) throw new NotCompact();
  return value;
}

/** A limit record as stored (parsed JSON, either form); a typed, non-retryable error naming what is wrong. */
export function decodeLimitRecord(stored: unknown): LimitRecord {
  if (!isObject(stored) || typeof stored['at'] !== 'number')
    return invalid(`an object with a numeric "at"`, stored);
  if (stored['v'] === undefined) return firstForm(stored);
  if (stored['v'] !== LIMIT_RECORD_VERSION) return invalid(`version ${LIMIT_RECORD_VERSION}`, stored['v']);
  const s = stored as unknown as StoredRecord;
  const at = s.at;
  const tenants = s.tn ?? [];
  const tenantAt = (index: number | null | undefined): string => {
    const tenant = tenants[index ?? 0];
    return typeof tenant === 'string' ? tenant : invalid('a tenant index within "tn"', index);
  };
  const time = (offset: number | null | undefined): number =>
    typeof offset === 'number' ? at + offset : invalid('a time in ms relative to "at"', offset);
  const levels: LimitRecord['levels'] = {};
  for (const [rate, field] of RATE_FIELDS) if (s.lv?.[field] !== undefined) levels[rate] = s.lv[field];
  const slots = Object.fromEntries(Object.entries(s.sl ?? {}).map(([slot, until]) => [slot, time(until)]));
  const queue = Object.fromEntries(
    Object.entries(s.q ?? {}).map(([holder, tuple]): [string, SlotWaiter] => {
      if (!Array.isArray(tuple)) return invalid(`a queue entry [since, until, …] for ${holder}`, tuple);
      const waiter: SlotWaiter = { since: time(tuple[0]), until: time(tuple[1]) };
      if (tuple[2] !== undefined && tuple[2] !== null) waiter.tenant = tenantAt(tuple[2]);
      if (typeof tuple[3] === 'number') waiter.priority = tuple[3];
      return [holder, waiter];
    }),
  );
  const record: LimitRecord = { at, levels, slots, queue };
  if (s.ln !== undefined) {
    const line: Record<string, LineEntry> = {};
    for (const holder of Object.keys(s.ln)) {
      const tuple = s.ln[holder];
      if (!Array.isArray(tuple)) return invalid(`a line entry [since, until, …] for ${holder}`, tuple);
      const entry: LineEntry = {
        tenant: tenantAt(tuple[2]),
        priority: tuple[3] ?? 0,
        since: time(tuple[0]),
        until: time(tuple[1]),
      };
      if (tuple[4] !== undefined && tuple[4] !== null) entry.woken = time(tuple[4]);
      // A holder named `__proto__` stays a plain key, as `JSON.parse` keeps it.
      if (holder === '__proto__')
        Object.defineProperty(line, holder, {
          value: entry,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else line[holder] = entry;
    }
    record.line = line;
  }
  if (s.th) record.throttle = { factor: s.th[0], until: time(s.th[1]) };
  if (s.sv !== undefined) record.served = s.sv;
  if (s.vt !== undefined) record.virtual = s.vt;
  if (s.kl !== undefined) record.keyLimit = s.kl;
  if (s.ss !== undefined) record.slotShares = s.ss;
  return record;
}

/** A record written before the compact form: the `LimitRecord` as it was. */
function firstForm(stored: Record<string, unknown>): LimitRecord {
  for (const field of ['levels', 'slots', 'queue'])
    if (!isObject(stored[field])) return invalid(`an object "${field}"`, stored[field]);
  return stored as unknown as LimitRecord;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(wanted: string, got: unknown): never {
  const shown = JSON.stringify(got)?.slice(0, 80) ?? String(got);
  throw new DuraError(
    'flow_record_invalid',
    `a limit record in dura_flow is not valid: wanted ${wanted}, got ${shown}`,
  );
}
