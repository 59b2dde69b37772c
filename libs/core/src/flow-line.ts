/**
 * The line of callers waiting for a rate ticket beyond the horizon (pure, no I/O): ordered by priority,
 * then by tenants' shares of the rate (weighted fair queueing over each tenant's virtual time), then by when
 * each asked.
 */
import {
  capacityOf,
  costOf,
  MAX_LINE,
  MINUTE_MS,
  LINE_RECHECK_MAX_MS,
  LINE_WAKE_RETRY_MS,
  LINE_WAKE_SLACK_MS,
  QUEUE_GRACE_MS,
  RATES,
  throttleFactor,
  TICKET_HORIZON_CALLS,
  type CallCost,
  type LimitName,
  type LimitRecord,
  type LineEntry,
  type ModelLimit,
  type TicketOutcome,
} from './flow-limits';

export interface Room {
  /** How many calls like this one may hold tickets now (the horizon included). */
  calls: number;
  /** The rate that binds: its name, its rate per minute and this call's cost under it. */
  limit: LimitName;
  perMinute: number;
  cost: number;
}

/** The room under the binding rate of `limit` for calls like `call`; undefined when no rate counts it. */
export function roomFor(record: LimitRecord, limit: ModelLimit, call: CallCost): Room | undefined {
  let room: Room | undefined;
  for (const { rate, per, name } of RATES) {
    const perMinute = limit[per] as number | undefined;
    if (perMinute === undefined) continue;
    const cost = Math.min(capacityOf(limit, perMinute), costOf(rate, call));
    if (cost <= 0) continue;
    const calls = Math.floor((record.levels[rate] as number) / cost) + TICKET_HORIZON_CALLS;
    if (!room || calls < room.calls) room = { calls, limit: name, perMinute, cost };
  }
  return room;
}

const tenantOf = (call: { tenant?: string }) => call.tenant ?? 'default';
const weightOf = (limit: ModelLimit, tenant: string) => Math.max(0.001, limit.weights?.[tenant] ?? 1);

/** A tenant's virtual time: where its next call would start, never behind the last call served. */
function startOf(record: LimitRecord, tenant: string): number {
  return Math.max(record.served?.[tenant] ?? 0, record.virtual ?? 0);
}

/**
 * The line in the order it goes: each tenant's callers are tagged in the order they asked (each a further
 * call's share of the tenant's virtual time); the line goes by priority, then by tag, then by when each
 * asked (then by name, so that every replica sees one order).
 */
function ordered(
  record: LimitRecord,
  limit: ModelLimit,
  entries: [string, LineEntry][],
): [string, LineEntry][] {
  const byTenant = new Map<string, [string, LineEntry][]>();
  for (const entry of entries) {
    const list = byTenant.get(entry[1].tenant) ?? [];
    list.push(entry);
    byTenant.set(entry[1].tenant, list);
  }
  const keyed: { holder: string; entry: LineEntry; tag: number }[] = [];
  for (const [tenant, list] of byTenant) {
    list.sort(([a, x], [b, y]) => y.priority - x.priority || x.since - y.since || (a < b ? -1 : 1));
    const start = startOf(record, tenant);
    const step = 1 / weightOf(limit, tenant);
    list.forEach(([holder, entry], i) => keyed.push({ holder, entry, tag: start + i * step }));
  }
  keyed.sort(
    (x, y) =>
      y.entry.priority - x.entry.priority ||
      x.tag - y.tag ||
      x.entry.since - y.entry.since ||
      (x.holder < y.holder ? -1 : x.holder > y.holder ? 1 : 0),
  );
  return keyed.map(({ holder, entry }) => [holder, entry]);
}

/** How many callers in line go before `call` (in the order of `ordered`). */
export function aheadInLine(record: LimitRecord, limit: ModelLimit, call: CallCost): number {
  const line = record.line ?? {};
  if (Object.keys(line).length === 0) return 0;
  const mine: LineEntry = line[call.holder] ?? {
    tenant: tenantOf(call),
    priority: call.priority ?? 0,
    since: Number.MAX_SAFE_INTEGER,
    until: 0,
  };
  const entries: [string, LineEntry][] = [
    ...Object.entries(line).filter(([h]) => h !== call.holder),
    [call.holder, mine],
  ];
  return ordered(record, limit, entries).findIndex(([holder]) => holder === call.holder);
}

/**
 * `call` waits in line (keeping the place it had) and sleeps until its turn: when the callers ahead of it
 * should have gone (at most `LINE_RECHECK_MAX_MS`). Its place is kept until a grace after that. A line moving
 * faster than told (callers ahead that went sooner, gave tokens back, were dropped) is caught up with by
 * `dueInLine`, which wakes callers whose turn came sooner. Beyond `MAX_LINE`, a caller has no place, and
 * sleeps until the line should have drained as far as where it would stand.
 */
export function queued(
  record: LimitRecord,
  limit: ModelLimit,
  call: CallCost,
  now: number,
  behind: number,
  room: Room,
): { record: LimitRecord; outcome: TicketOutcome } {
  const perMs = (room.perMinute * throttleFactor(record, now)) / MINUTE_MS;
  const turn = Math.ceil((behind * room.cost) / perMs);
  const recheckAt = now + Math.min(LINE_RECHECK_MAX_MS, Math.max(250, turn));
  const line = record.line ?? {};
  const known = line[call.holder];
  if (!known && Object.keys(line).length >= MAX_LINE)
    return { record, outcome: { kind: 'line', recheckAt, limit: room.limit, ahead: behind } };
  const entry: LineEntry = {
    tenant: tenantOf(call),
    priority: call.priority ?? 0,
    since: known?.since ?? now,
    until: recheckAt + QUEUE_GRACE_MS,
  };
  const ahead = behind + room.calls - 1;
  return {
    record: { ...record, line: { ...line, [call.holder]: entry } },
    outcome: { kind: 'line', recheckAt, limit: room.limit, ahead },
  };
}

/**
 * The callers in line that could take a ticket now (the first `room.calls`, as for calls like `call`) but
 * were told to ask again later than that: the line moved faster than estimated. They are to be woken now
 * (returned, first in line first) and are marked, so that the next change wakes them again only if they have
 * not asked again within `LINE_WAKE_RETRY_MS` (a lost wake). Their place is kept as it was.
 */
export function dueInLine(
  record: LimitRecord,
  limit: ModelLimit,
  call: CallCost,
  now: number,
): { record: LimitRecord; wake: string[] } {
  const room = roomFor(record, limit, call);
  return room ? woken(record, limit, now, room.calls, call.holder) : { record, wake: [] };
}

/**
 * `holder` leaves the line for good (its run ended while it waited): it holds nobody back any longer. When it
 * was first in line, the caller now first is woken if it was told to ask again later than now (its turn came
 * sooner); once it goes, its admission wakes the ones after it (`dueInLine`). Of callers leaving the front of
 * the line at once, in any order, the last to leave was first by then: the live caller behind them is woken.
 * A no-op when `holder` is not in line.
 */
export function leftLine(
  record: LimitRecord,
  limit: ModelLimit,
  holder: string,
  now: number,
): { record: LimitRecord; wake: string[] } {
  if (!record.line?.[holder]) return { record, wake: [] };
  const [first] = ordered(record, limit, Object.entries(record.line));
  const { [holder]: _gone, ...line } = record.line;
  const left = { ...record, line };
  return first?.[0] === holder ? woken(left, limit, now, 1, holder) : { record: left, wake: [] };
}

/** Of the first `count` callers in line, those told to ask again later than now, marked as woken. */
function woken(
  record: LimitRecord,
  limit: ModelLimit,
  now: number,
  count: number,
  except: string,
): { record: LimitRecord; wake: string[] } {
  const line = record.line;
  if (!line || count <= 0) return { record, wake: [] };
  const holders = Object.keys(line);
  if (holders.length === 0) return { record, wake: [] };
  const late = (entry: LineEntry) =>
    entry.until - QUEUE_GRACE_MS > now + LINE_WAKE_SLACK_MS &&
    (entry.woken === undefined || entry.woken + LINE_WAKE_RETRY_MS <= now);
  // In a line no longer than `count`, order does not matter: the common case costs no sort.
  const first =
    holders.length <= count
      ? Object.entries(line)
      : ordered(record, limit, Object.entries(line)).slice(0, count);
  const wake = first.filter(([holder, entry]) => holder !== except && late(entry)).map(([h]) => h);
  if (wake.length === 0) return { record, wake };
  const marked = Object.fromEntries(wake.map((holder) => [holder, { ...line[holder]!, woken: now }]));
  return { record: { ...record, line: { ...line, ...marked } }, wake };
}

/** `call` is served: out of the line, and its tenant's virtual time moves on by its share. */
export function served(record: LimitRecord, limit: ModelLimit, call: CallCost): LimitRecord {
  const tenant = tenantOf(call);
  const start = startOf(record, tenant);
  const { [call.holder]: _left, ...line } = record.line ?? {};
  const virtual = Math.max(record.virtual ?? 0, start);
  // A tenant that is not behind the last call served starts from it anyway: only the ones ahead are kept.
  const kept = Object.entries(record.served ?? {}).filter(([name, at]) => name !== tenant && at > virtual);
  return {
    ...record,
    line,
    virtual,
    served: Object.fromEntries([...kept, [tenant, start + 1 / weightOf(limit, tenant)]]),
  };
}

/** Callers in line not seen again in time are dropped. */
export function prunedLine(record: LimitRecord, now: number): LimitRecord {
  if (!record.line) return record;
  const line = Object.fromEntries(Object.entries(record.line).filter(([, entry]) => entry.until > now));
  return { ...record, line };
}
