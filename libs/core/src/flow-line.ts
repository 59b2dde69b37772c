/**
 * The line of callers waiting for a rate ticket beyond the horizon (pure, no I/O): ordered by priority,
 * then by tenants' shares of the rate (weighted fair queueing over each tenant's virtual time), then by when
 * each asked. `lineOrder` is that ordering for any line: the slots of `flow-slots.ts` go by it too.
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
  type Shares,
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

/** A caller waiting for capacity, as the line orders it. */
export interface Waiter {
  tenant: string;
  priority: number;
  /** When it first asked: a tenant's callers go in that order. */
  since: number;
}

/** A tenant's virtual time: where its next unit would start, never behind the last unit served. */
function startOf(shares: Shares, tenant: string): number {
  return Math.max(shares.served?.[tenant] ?? 0, shares.virtual ?? 0);
}

/**
 * The order in which `waiters` go (holders, first first): by priority, higher first; then by tenants' shares
 * (each tenant's callers are tagged in the order they asked, each a further unit's share of the tenant's
 * virtual time, and the lowest tag goes first); then by when each asked. The one ordering of every line:
 * rate tickets, concurrent-call slots and concurrency keys.
 */
export function lineOrder(
  waiters: Readonly<Record<string, Waiter>>,
  shares: Shares,
  weight: (tenant: string) => number,
): string[] {
  const entries = Object.entries(waiters);
  const byTenant = new Map<string, [string, Waiter][]>();
  for (const entry of entries) {
    const list = byTenant.get(entry[1].tenant) ?? [];
    list.push(entry);
    byTenant.set(entry[1].tenant, list);
  }
  const tags = new Map<string, number>();
  for (const [tenant, list] of byTenant) {
    list.sort(byTenantOrder);
    const start = startOf(shares, tenant);
    const step = 1 / Math.max(0.001, weight(tenant));
    list.forEach(([holder], i) => tags.set(holder, start + i * step));
  }
  const key = (holder: string, entry: Waiter) => [-entry.priority, tags.get(holder) ?? 0, entry.since];
  return entries
    .map(([holder, entry]) => ({ holder, key: key(holder, entry) }))
    .sort(byKey)
    .map(({ holder }) => holder);
}

/** A tenant's callers in order: by priority, higher first, then by when each asked. */
function tenantOrder(a: string, x: Waiter, b: string, y: Waiter): number {
  return y.priority - x.priority || x.since - y.since || (a < b ? -1 : 1);
}

function byTenantOrder([a, x]: [string, Waiter], [b, y]: [string, Waiter]): number {
  return tenantOrder(a, x, b, y);
}

/** The line's order: by priority, then by tag (the tenant's share), then by when each asked. */
function byKey(x: { holder: string; key: number[] }, y: { holder: string; key: number[] }): number {
  for (let i = 0; i < x.key.length; i++)
    if (x.key[i] !== y.key[i]) return (x.key[i] as number) - (y.key[i] as number);
  return x.holder < y.holder ? -1 : 1;
}

/** `tenant` was served one unit: its virtual time moves on by its share (one unit over its weight). */
export function servedShare(shares: Shares, tenant: string, weight: number): Required<Shares> {
  const start = startOf(shares, tenant);
  const virtual = Math.max(shares.virtual ?? 0, start);
  // A tenant that is not behind the last unit served starts from it anyway: only the ones ahead are kept.
  const kept = Object.entries(shares.served ?? {}).filter(([name, at]) => name !== tenant && at > virtual);
  return {
    virtual,
    served: Object.fromEntries([...kept, [tenant, start + 1 / Math.max(0.001, weight)]]),
  };
}

/**
 * How many callers in line go before `call` (see `lineOrder`); a caller not in line yet goes after every
 * caller of its tenant and priority that is. The same count as `lineOrder(…).indexOf(call.holder)`, without
 * ordering the whole line (a join into a line of thousands pays this): a caller of its own tenant is ahead
 * exactly when it comes first in the tenant's order (its tag is then no later, and ties fall the same way),
 * so only other tenants' callers are ordered, each tenant apart, to find their tags.
 */
export function aheadInLine(record: LimitRecord, limit: ModelLimit, call: CallCost): number {
  const line = record.line ?? {};
  const holders = Object.keys(line);
  if (holders.length === 0) return 0;
  const mine: Waiter = line[call.holder] ?? {
    tenant: tenantOf(call),
    priority: call.priority ?? 0,
    since: Number.MAX_SAFE_INTEGER,
  };
  let rank = 0;
  const others = new Map<string, [string, Waiter][]>();
  for (const holder of holders) {
    if (holder === call.holder) continue;
    const entry = line[holder] as LineEntry;
    if (entry.tenant !== mine.tenant) {
      const list = others.get(entry.tenant) ?? [];
      list.push([holder, entry]);
      others.set(entry.tenant, list);
    } else if (tenantOrder(holder, entry, call.holder, mine) < 0) rank++;
  }
  const weight = (tenant: string) => weightOf(limit, tenant);
  const tag = startOf(record, mine.tenant) + rank * (1 / Math.max(0.001, weight(mine.tenant)));
  const key = [-mine.priority, tag, mine.since];
  let ahead = rank;
  for (const [tenant, list] of others) {
    list.sort(byTenantOrder);
    const start = startOf(record, tenant);
    const step = 1 / Math.max(0.001, weight(tenant));
    list.forEach(([holder, entry], i) => {
      if (
        byKey(
          { holder, key: [-entry.priority, start + i * step, entry.since] },
          { holder: call.holder, key },
        ) < 0
      )
        ahead++;
    });
  }
  return ahead;
}

/** `entries` in the order the line goes (`lineOrder`), each with its entry. */
function ordered(
  record: LimitRecord,
  limit: ModelLimit,
  entries: [string, LineEntry][],
): [string, LineEntry][] {
  const byHolder = new Map(entries);
  return lineOrder(Object.fromEntries(entries), record, (tenant) => weightOf(limit, tenant)).map((holder) => [
    holder,
    byHolder.get(holder) as LineEntry,
  ]);
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
  const { [call.holder]: _left, ...line } = record.line ?? {};
  return { ...record, line, ...servedShare(record, tenant, weightOf(limit, tenant)) };
}

/** Callers in line not seen again in time are dropped. */
export function prunedLine(record: LimitRecord, now: number): LimitRecord {
  if (!record.line) return record;
  // Most admissions drop nobody: the line is copied only when someone goes.
  let expired = false;
  for (const holder in record.line) if ((expired = record.line[holder]!.until <= now)) break;
  if (!expired) return record;
  const line = Object.fromEntries(Object.entries(record.line).filter(([, entry]) => entry.until > now));
  return { ...record, line };
}
