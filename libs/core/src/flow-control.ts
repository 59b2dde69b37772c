/**
 * Model limits as pure admission logic (no I/O): what a call may do against a limit's shared record, read
 * and written with compare-and-set by the planner. Time comes in as an argument. The record and the limits
 * are described in `flow-limits.ts`; the line of callers beyond the ticket horizon in `flow-line.ts`; the
 * concurrency slots (concurrent calls, concurrency keys) in `flow-slots.ts`.
 */
import {
  capacityOf,
  admittableOf,
  costOf,
  MINUTE_MS,
  RATES,
  refilled,
  throttleFactor,
  type CallCost,
  type LimitName,
  type LimitRecord,
  type ModelLimit,
  type Rate,
  type TicketOutcome,
} from './flow-limits';
import { aheadInLine, prunedLine, queued, roomFor, served } from './flow-line';

/**
 * Takes `call`'s worst case from every rate bucket of `limit`. `go` when each had enough; `at`, the moment the
 * deepest debt is paid back (the bucket that binds is named), when that is within `TICKET_HORIZON_CALLS`
 * calls' worth; else `line`: the caller waits its turn among callers in line, ordered by priority, then by
 * tenants' shares (weighted fair queueing: the tenant served least for its weight first), then by when each
 * asked. A cost above a bucket's capacity is taken as its capacity: it goes when the bucket is full, rather
 * than never.
 */
export function takeTicket(
  current: LimitRecord,
  limit: ModelLimit,
  call: CallCost,
  now: number,
): { record: LimitRecord; outcome: TicketOutcome } {
  const record = prunedLine(refilled(current, limit, now), now);
  const factor = throttleFactor(record, now);
  const room = roomFor(record, limit, call);
  const ahead = aheadInLine(record, limit, call);
  if (room && ahead >= room.calls) {
    const waiting = queued(record, limit, call, now, ahead - room.calls + 1, room);
    // A caller without a place in a full line changes nothing: the record is not written again.
    return waiting.record === record ? { record: current, outcome: waiting.outcome } : waiting;
  }
  const levels = { ...record.levels };
  let at = now;
  let binding: LimitName | undefined;
  for (const { rate, per, name } of RATES) {
    const perMinute = limit[per] as number | undefined;
    if (perMinute === undefined) continue;
    const cost = Math.min(capacityOf(limit, perMinute), costOf(rate, call));
    const after = (levels[rate] as number) - cost;
    levels[rate] = after;
    if (after >= 0) continue;
    const ready = now + Math.ceil((-after * MINUTE_MS) / (perMinute * factor));
    if (ready > at) {
      at = ready;
      binding = name;
    }
  }
  const next = served({ ...record, levels }, limit, call);
  return { record: next, outcome: binding ? { kind: 'at', at, limit: binding } : { kind: 'go' } };
}

/**
 * Gives back all a call took, for a call that will not go now after all (it waits for a slot, or in another
 * limit's line): a ticket kept across such a wait would be spent late, when the provider's bucket may have
 * filled to its brim meanwhile, and meet calls admitted after it.
 */
export function refundTicket(
  current: LimitRecord,
  limit: ModelLimit,
  call: CallCost,
  now: number,
): LimitRecord {
  const record = refilled(current, limit, now);
  const levels = { ...record.levels };
  for (const { rate, per } of RATES) {
    const perMinute = limit[per] as number | undefined;
    if (perMinute === undefined) continue;
    const cost = Math.min(capacityOf(limit, perMinute), costOf(rate, call));
    levels[rate] = Math.min(admittableOf(limit, perMinute), (levels[rate] as number) + cost);
  }
  return { ...record, levels };
}

/** Gives back what a call took beyond its recorded usage (never above one minute's worth). */
export function settleTicket(
  current: LimitRecord,
  limit: ModelLimit,
  worst: CallCost,
  used: { inputTokens: number; outputTokens: number },
  now: number,
): LimitRecord {
  const record = refilled(current, limit, now);
  const levels = { ...record.levels };
  const back: Record<Rate, number> = {
    requests: 0,
    input: Math.max(0, worst.inputTokens - used.inputTokens),
    output: Math.max(0, worst.outputTokens - used.outputTokens),
  };
  for (const { rate, per } of RATES) {
    const perMinute = limit[per] as number | undefined;
    if (perMinute === undefined || back[rate] === 0) continue;
    levels[rate] = Math.min(admittableOf(limit, perMinute), (levels[rate] as number) + back[rate]);
  }
  return { ...record, levels };
}

/**
 * A provider answered 429: its rate for this model is lowered by a quarter (down to a quarter) until a minute after
 * `retryAfterMs`, and nothing more goes out before `retryAfterMs` has passed.
 */
export function throttled(
  current: LimitRecord,
  limit: ModelLimit,
  retryAfterMs: number,
  now: number,
): LimitRecord {
  const record = refilled(current, limit, now);
  const factor = Math.max(0.25, throttleFactor(record, now) * 0.75);
  const levels = { ...record.levels };
  for (const { rate, per } of RATES) {
    const perMinute = limit[per] as number | undefined;
    if (perMinute === undefined) continue;
    const pause = -(retryAfterMs * perMinute * factor) / MINUTE_MS;
    levels[rate] = Math.min(levels[rate] as number, pause);
  }
  return { ...record, levels, throttle: { factor, until: now + retryAfterMs + MINUTE_MS } };
}
