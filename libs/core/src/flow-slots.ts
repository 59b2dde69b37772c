/**
 * Concurrency slots with a lease (pure, no I/O): a model limit's `concurrentCalls`, and a concurrency key's
 * `limit` runs. Callers refused a slot queue, and go in the order of every line (`lineOrder`): priority, then
 * tenants' shares of the slots (weighted fair queueing), then when each asked.
 */
import {
  QUEUE_GRACE_MS,
  SLOT_RECHECK_MAX_MS,
  type LimitRecord,
  type ModelLimit,
  type SlotOutcome,
  type SlotWaiter,
} from './flow-limits';
import { lineOrder, servedShare, type Waiter } from './flow-line';

/** Who asks for a slot: whose share it is taken from (default `default`), and its priority (default 0). */
export interface SlotCaller {
  tenant?: string;
  priority?: number;
}

const weightOf = (limit: ModelLimit) => (tenant: string) => limit.weights?.[tenant] ?? 1;

/** Leases and queue entries that ran out are dropped. */
function pruned(record: LimitRecord, now: number): LimitRecord {
  const slots = Object.fromEntries(Object.entries(record.slots).filter(([, until]) => until > now));
  const queue = Object.fromEntries(Object.entries(record.queue).filter(([, entry]) => entry.until > now));
  return { ...record, slots, queue };
}

function waiterOf(entry: SlotWaiter): Waiter {
  return { tenant: entry.tenant ?? 'default', priority: entry.priority ?? 0, since: entry.since };
}

/** The queued callers (and `extra`, when given) in the order they go. */
function queueOrder(record: LimitRecord, limit: ModelLimit, extra?: [string, SlotWaiter]): string[] {
  const waiters = Object.fromEntries(
    Object.entries(extra ? { ...record.queue, [extra[0]]: extra[1] } : record.queue).map(
      ([holder, entry]) => [holder, waiterOf(entry)],
    ),
  );
  return lineOrder(waiters, record.slotShares ?? {}, weightOf(limit));
}

/**
 * A concurrency slot for `holder`, leased for `leaseMs`, when fewer than `limit.concurrentCalls` are held and
 * no queued caller goes before it (`lineOrder`: a caller of higher priority, or of a tenant served less for
 * its weight, or that asked earlier). Refused callers queue, keeping when they first asked, and are told
 * when to ask again (sooner the closer they are to the front). `slot` names the slot taken (default
 * `holder`): asking again under the same name renews its lease instead of taking another, which a call
 * gives a name of its own so that two attempts of one decision never share a slot.
 */
export function takeSlot(
  current: LimitRecord,
  limit: ModelLimit,
  holder: string,
  leaseMs: number,
  now: number,
  slot: string = holder,
  caller: SlotCaller = {},
): { record: LimitRecord; outcome: SlotOutcome } {
  const capacity = limit.concurrentCalls;
  if (capacity === undefined) return { record: current, outcome: { kind: 'go' } };
  const record = pruned(current, now);
  if (slot in record.slots) {
    const slots = { ...record.slots, [slot]: now + leaseMs };
    return { record: { ...record, slots }, outcome: { kind: 'go' } };
  }
  const known = record.queue[holder];
  const tenant = caller.tenant ?? known?.tenant ?? 'default';
  const priority = caller.priority ?? known?.priority ?? 0;
  const mine: SlotWaiter = { since: known?.since ?? now, until: 0, tenant, priority };
  const ahead = queueOrder(record, limit, [holder, mine]).indexOf(holder);
  const free = capacity - Object.keys(record.slots).length;
  if (free > ahead) {
    const { [holder]: _left, ...queue } = record.queue;
    const slots = { ...record.slots, [slot]: now + leaseMs };
    const slotShares = servedShare(record.slotShares ?? {}, tenant, weightOf(limit)(tenant));
    return { record: { ...record, slots, queue, slotShares }, outcome: { kind: 'go' } };
  }
  const soonestEnd = Math.min(...Object.values(record.slots), now + SLOT_RECHECK_MAX_MS);
  const backoff = Math.min(SLOT_RECHECK_MAX_MS, 1_000 * (ahead + 1));
  const recheckAt = Math.max(now + 250, Math.min(soonestEnd, now + backoff));
  const queue = { ...record.queue, [holder]: { ...mine, until: recheckAt + QUEUE_GRACE_MS } };
  return { record: { ...record, queue }, outcome: { kind: 'full', recheckAt, ahead } };
}

/** The queued callers a free slot is waiting for, first in line first (as many as slots are free). */
export function nextInLine(current: LimitRecord, limit: ModelLimit, now: number): string[] {
  const record = pruned(current, now);
  const free = (limit.concurrentCalls ?? 0) - Object.keys(record.slots).length;
  if (free <= 0) return [];
  return queueOrder(record, limit).slice(0, free);
}

/**
 * The lease of `slot` extended to `now + leaseMs` while its call is still in flight; `lost` when the lease
 * ran out first (the slot may be someone else's by now: nothing is taken anew).
 */
export function renewSlot(
  current: LimitRecord,
  slot: string,
  leaseMs: number,
  now: number,
): { record: LimitRecord; lost: boolean } {
  const until = current.slots[slot];
  if (until === undefined || until <= now) return { record: current, lost: true };
  return { record: { ...current, slots: { ...current.slots, [slot]: now + leaseMs } }, lost: false };
}

/** The slot of `holder` given back (a no-op when it holds none). */
export function releaseSlot(current: LimitRecord, holder: string, now: number): LimitRecord {
  const record = pruned(current, now);
  if (!(holder in record.slots)) return record;
  const { [holder]: _gone, ...slots } = record.slots;
  return { ...record, slots };
}
