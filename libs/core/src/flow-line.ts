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
  QUEUE_GRACE_MS,
  RATES,
  SLOT_RECHECK_MAX_MS,
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
 * How many callers in line go before `call`: its tenant's callers are tagged in the order they asked (each a
 * further call's share of the tenant's virtual time); the line goes by priority, then by tag.
 */
export function aheadInLine(record: LimitRecord, limit: ModelLimit, call: CallCost): number {
  const line = record.line ?? {};
  const holders = Object.keys(line);
  if (holders.length === 0) return 0;
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
  const byTenant = new Map<string, [string, LineEntry][]>();
  for (const entry of entries) {
    const list = byTenant.get(entry[1].tenant) ?? [];
    list.push(entry);
    byTenant.set(entry[1].tenant, list);
  }
  const tags = new Map<string, number>();
  for (const [tenant, list] of byTenant) {
    list.sort(([a, x], [b, y]) => y.priority - x.priority || x.since - y.since || (a < b ? -1 : 1));
    const start = startOf(record, tenant);
    const step = 1 / weightOf(limit, tenant);
    list.forEach(([holder], i) => tags.set(holder, start + i * step));
  }
  const order = (holder: string, entry: LineEntry) => [-entry.priority, tags.get(holder) ?? 0, entry.since];
  const me = order(call.holder, mine);
  return entries.filter(([holder, entry]) => {
    if (holder === call.holder) return false;
    const other = order(holder, entry);
    for (let i = 0; i < me.length; i++)
      if (other[i] !== me[i]) return (other[i] as number) < (me[i] as number);
    return holder < call.holder;
  }).length;
}

/** `call` waits in line (keeping the place it had): asked again when its turn should have come. */
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
  const recheckAt = now + Math.min(SLOT_RECHECK_MAX_MS, Math.max(250, turn));
  const line = record.line ?? {};
  const known = line[call.holder];
  if (!known && Object.keys(line).length >= MAX_LINE)
    return {
      record,
      outcome: { kind: 'line', recheckAt: now + SLOT_RECHECK_MAX_MS, limit: room.limit, ahead: behind },
    };
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
