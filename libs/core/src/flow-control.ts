/**
 * Model limits as pure admission logic (no I/O): a shared record per limit, read and written with
 * compare-and-set by the planner, and what a call may do against it. Time comes in as an argument.
 *
 * Rates are token buckets refilled continuously (as providers count them): a bucket holds at most one
 * minute's worth, and a call takes its cost at once. A bucket may go into debt: the call then gets a
 * ticket for the moment the debt is paid back, so callers are served in the order they asked, and each
 * waits on a durable timer instead of asking again and again. Concurrent calls are slots with a lease, so
 * a holder that dies mid-call gives its slot back when the lease runs out.
 */

/** A limit declared for a provider's model (e.g. `openai/gpt-4o-mini`), optionally per tenant. */
export interface ModelLimit {
  /** `provider/model`. */
  model: string;
  /** Unset: one limit shared by every tenant; `*`: each tenant has its own; a name: only that tenant's calls. */
  tenant?: string;
  requestsPerMinute?: number;
  inputTokensPerMinute?: number;
  outputTokensPerMinute?: number;
  concurrentCalls?: number;
  /**
   * How many seconds' worth a bucket holds (1 to 60, default 60): a provider that smooths its limit (say
   * 60 requests/min as one per second) is declared with a short burst.
   */
  burstSeconds?: number;
  /**
   * How many seconds' worth of each rate is kept unused (0 to 30, default 2, never more than half the
   * bucket), for calls admitted but not yet received: the provider counts a call when it arrives, and a
   * call that leaves late (a loaded process, a timer that fires late) would otherwise meet one admitted
   * after it at the provider and overfill its bucket.
   */
  headroomSeconds?: number;
}

/** The name a wait shows for the limit it waits on. */
export type LimitName =
  'requests per minute' | 'input tokens per minute' | 'output tokens per minute' | 'concurrent calls';

type Rate = 'requests' | 'input' | 'output';

/** The shared state of one limit (one KV entry). */
export interface LimitRecord {
  /** When `levels` were computed (ms since the epoch). */
  at: number;
  /** Units available per bucket at `at`; negative: tickets handed out ahead of time. */
  levels: Partial<Record<Rate, number>>;
  /** Holders of concurrency slots → when their lease ends. */
  slots: Record<string, number>;
  /** Callers refused a slot, in the order they first asked → when they stop counting (not seen again). */
  queue: Record<string, { since: number; until: number }>;
  /** A provider's 429: the rate is lowered by `factor` until `until`. */
  throttle?: { factor: number; until: number };
}

/** One call's worst case, as the budget reserves it. */
export interface CallCost {
  /** Stable across re-drives of the same decision (`runId:decision`). */
  holder: string;
  inputTokens: number;
  outputTokens: number;
}

export type TicketOutcome =
  | { kind: 'go' }
  /** Admitted for `at`: the caller waits until then, holding nothing. */
  | { kind: 'at'; at: number; limit: LimitName };

export type SlotOutcome = { kind: 'go' } | { kind: 'full'; recheckAt: number; ahead: number };

const MINUTE_MS = 60_000;
/** A queued caller not seen again for this long after its recheck is dropped (a cancelled or dead run). */
export const QUEUE_GRACE_MS = 30_000;
/** The longest a refused caller waits before it asks for a slot again. */
export const SLOT_RECHECK_MAX_MS = 30_000;
const RATES: readonly { rate: Rate; per: keyof ModelLimit; name: LimitName }[] = [
  { rate: 'requests', per: 'requestsPerMinute', name: 'requests per minute' },
  { rate: 'input', per: 'inputTokensPerMinute', name: 'input tokens per minute' },
  { rate: 'output', per: 'outputTokensPerMinute', name: 'output tokens per minute' },
];

export function emptyLimitRecord(now: number): LimitRecord {
  return { at: now, levels: {}, slots: {}, queue: {} };
}

/** The rate factor in force at `now` (1 unless a 429 lowered it). */
export function throttleFactor(record: LimitRecord, now: number): number {
  return record.throttle && record.throttle.until > now ? record.throttle.factor : 1;
}

/** What a bucket holds at most: `burstSeconds` of its rate, one minute's worth by default. */
export function capacityOf(limit: ModelLimit, perMinute: number): number {
  const seconds = Math.min(60, Math.max(1, limit.burstSeconds ?? 60));
  return (perMinute * seconds) / 60;
}

/** Seconds of headroom a limit keeps when it declares none. */
export const DEFAULT_HEADROOM_SECONDS = 2;

/**
 * What admission lets a bucket hold: its capacity less the headroom (`headroomSeconds` of its rate, at most
 * half the capacity). A call still costs its full price, so the rate admitted is the declared one: only the
 * burst is shorter, by what calls in transit may need.
 */
export function admittableOf(limit: ModelLimit, perMinute: number): number {
  const capacity = capacityOf(limit, perMinute);
  const headroom = ((limit.headroomSeconds ?? DEFAULT_HEADROOM_SECONDS) * perMinute) / 60;
  return capacity - Math.min(capacity / 2, Math.max(0, headroom));
}

/** Each declared bucket refilled up to `now`, never above what admission lets it hold. */
export function refilled(record: LimitRecord, limit: ModelLimit, now: number): LimitRecord {
  const elapsed = Math.max(0, now - record.at);
  const factor = throttleFactor(record, now);
  const levels: Partial<Record<Rate, number>> = {};
  for (const { rate, per } of RATES) {
    const perMinute = limit[per] as number | undefined;
    if (perMinute === undefined) continue;
    const capacity = admittableOf(limit, perMinute);
    const level = record.levels[rate] ?? capacity;
    levels[rate] = Math.min(capacity, level + (elapsed * perMinute * factor) / MINUTE_MS);
  }
  return { ...record, at: Math.max(now, record.at), levels };
}

function costOf(rate: Rate, call: CallCost): number {
  return rate === 'requests' ? 1 : rate === 'input' ? call.inputTokens : call.outputTokens;
}

/**
 * Takes `call`'s worst case from every rate bucket of `limit`. `go` when each had enough; else `at`, the
 * moment the deepest debt is paid back (the bucket that binds is named). A cost above a bucket's capacity
 * is taken as its capacity: it goes when the bucket is full, rather than never.
 */
export function takeTicket(
  current: LimitRecord,
  limit: ModelLimit,
  call: CallCost,
  now: number,
): { record: LimitRecord; outcome: TicketOutcome } {
  const record = refilled(current, limit, now);
  const factor = throttleFactor(record, now);
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
  const next = { ...record, levels };
  return { record: next, outcome: binding ? { kind: 'at', at, limit: binding } : { kind: 'go' } };
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

/** Leases and queue entries that ran out are dropped. */
function pruned(record: LimitRecord, now: number): LimitRecord {
  const slots = Object.fromEntries(Object.entries(record.slots).filter(([, until]) => until > now));
  const queue = Object.fromEntries(Object.entries(record.queue).filter(([, entry]) => entry.until > now));
  return { ...record, slots, queue };
}

/**
 * A concurrency slot for `holder`, leased for `leaseMs`, when fewer than `limit.concurrentCalls` are held and
 * no caller that asked earlier still waits for one. Refused callers queue in the order they first asked
 * and are told when to ask again (sooner the closer they are to the front). `slot` names the slot taken
 * (default `holder`): asking again under the same name renews its lease instead of taking another, which a
 * call gives a name of its own so that two attempts of one decision never share a slot.
 */
export function takeSlot(
  current: LimitRecord,
  limit: ModelLimit,
  holder: string,
  leaseMs: number,
  now: number,
  slot: string = holder,
): { record: LimitRecord; outcome: SlotOutcome } {
  const capacity = limit.concurrentCalls;
  const record = pruned(current, now);
  if (capacity === undefined || slot in record.slots) {
    if (capacity === undefined) return { record: current, outcome: { kind: 'go' } };
    const slots = { ...record.slots, [slot]: now + leaseMs };
    return { record: { ...record, slots }, outcome: { kind: 'go' } };
  }
  const since = record.queue[holder]?.since ?? now;
  const ahead = Object.entries(record.queue).filter(
    ([other, entry]) =>
      other !== holder && (entry.since < since || (entry.since === since && other < holder)),
  ).length;
  const free = capacity - Object.keys(record.slots).length;
  if (free > ahead) {
    const { [holder]: _left, ...queue } = record.queue;
    const slots = { ...record.slots, [slot]: now + leaseMs };
    return { record: { ...record, slots, queue }, outcome: { kind: 'go' } };
  }
  const soonestEnd = Math.min(...Object.values(record.slots), now + SLOT_RECHECK_MAX_MS);
  const backoff = Math.min(SLOT_RECHECK_MAX_MS, 1_000 * (ahead + 1));
  const recheckAt = Math.max(now + 250, Math.min(soonestEnd, now + backoff));
  const queue = { ...record.queue, [holder]: { since, until: recheckAt + QUEUE_GRACE_MS } };
  return { record: { ...record, queue }, outcome: { kind: 'full', recheckAt, ahead } };
}

/** The queued callers a free slot is waiting for, first in line first (as many as slots are free). */
export function nextInLine(current: LimitRecord, limit: ModelLimit, now: number): string[] {
  const record = pruned(current, now);
  const free = (limit.concurrentCalls ?? 0) - Object.keys(record.slots).length;
  if (free <= 0) return [];
  return Object.entries(record.queue)
    .sort(([a, x], [b, y]) => x.since - y.since || (a < b ? -1 : 1))
    .slice(0, free)
    .map(([holder]) => holder);
}

/** The slot of `holder` given back (a no-op when it holds none). */
export function releaseSlot(current: LimitRecord, holder: string, now: number): LimitRecord {
  const record = pruned(current, now);
  if (!(holder in record.slots)) return record;
  const { [holder]: _gone, ...slots } = record.slots;
  return { ...record, slots };
}

/** The limits that apply to a call of `model` by `tenant`, each with the key of its shared record. */
export function limitsFor(
  limits: readonly ModelLimit[],
  model: string,
  tenant: string,
): { limit: ModelLimit; key: string }[] {
  return limits.flatMap((limit) => {
    if (limit.model !== model) return [];
    if (limit.tenant === undefined) return [{ limit, key: model }];
    if (limit.tenant === '*' || limit.tenant === tenant) return [{ limit, key: `${model}@${tenant}` }];
    return [];
  });
}

/** What a waiting run shows: `capacity of openai/gpt-4o-mini (tokens per minute)`. */
export function capacityReason(model: string, limit: LimitName, tenant?: string): string {
  return `capacity of ${model}${tenant ? ` for tenant ${tenant}` : ''} (${limit})`;
}
