/**
 * Model limits: what is declared, the shared record per limit, and the buckets' arithmetic (pure, no I/O).
 *
 * Rates are token buckets refilled continuously (as providers count them): a bucket holds at most one
 * minute's worth, and a call takes its cost at once. A bucket may go into debt: the call then gets a
 * ticket for the moment the debt is paid back, and waits on a durable timer instead of asking again and
 * again; beyond a short horizon, callers wait in line (`flow-line.ts`), where priority and tenants' shares
 * order them. Concurrent calls are slots with a lease, so a holder that dies mid-call gives its slot back
 * when the lease runs out.
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
  /**
   * Tenants' shares of the rate while callers wait in line (default 1 each): a tenant of weight 2 gets twice
   * the calls of a tenant of weight 1 when both have calls waiting.
   */
  weights?: Record<string, number>;
}

/** The name a wait shows for the limit it waits on. */
export type LimitName =
  'requests per minute' | 'input tokens per minute' | 'output tokens per minute' | 'concurrent calls';

export type Rate = 'requests' | 'input' | 'output';

/** The shared state of one limit (one KV entry). */
export interface LimitRecord {
  /** When `levels` were computed (ms since the epoch). */
  at: number;
  /** Units available per bucket at `at`; negative: tickets handed out ahead of time. */
  levels: Partial<Record<Rate, number>>;
  /** Holders of concurrency slots → when their lease ends. */
  slots: Record<string, number>;
  /** Callers refused a slot → who they are, when they first asked and when they stop counting (not seen again). */
  queue: Record<string, SlotWaiter>;
  /** A provider's 429: the rate is lowered by `factor` until `until`. */
  throttle?: { factor: number; until: number };
  /** Callers waiting for a rate ticket beyond the horizon → who they are and when they stop counting. */
  line?: Record<string, LineEntry>;
  /** Per tenant: its virtual time, the share of the rate it was served (calls over its weight). */
  served?: Record<string, number>;
  /** The virtual time of the last call served: a tenant that was idle starts from it, not from its past. */
  virtual?: number;
  /** A concurrency key's limit, as the last run that entered it asked (shown to operators, never enforced). */
  keyLimit?: number;
  /** Tenants' shares of the slots, as `served` and `virtual` are of the rates (`flow-slots.ts`). */
  slotShares?: Shares;
}

/** What tenants were served of a capacity, for their fair share of it (weighted fair queueing). */
export interface Shares {
  /** Per tenant: its virtual time, the share it was served (units over its weight). */
  served?: Record<string, number>;
  /** The virtual time of the last unit served: a tenant that was idle starts from it, not from its past. */
  virtual?: number;
}

/** A caller refused a slot; `tenant` and `priority` absent (queued before they were kept): `default`, 0. */
export interface SlotWaiter {
  since: number;
  until: number;
  tenant?: string;
  priority?: number;
}

/** A caller in line for a rate ticket. */
export interface LineEntry {
  tenant: string;
  priority: number;
  /** When it first asked: callers of a tenant go in that order. */
  since: number;
  /** Not seen again by then (cancelled, failed, gone): it stops holding anyone back. */
  until: number;
  /** When it was last woken because its turn came sooner than it was told (see `dueInLine`). */
  woken?: number;
}

/** One call's worst case, as the budget reserves it. */
export interface CallCost {
  /** Stable across re-drives of the same decision (`runId:decision`). */
  holder: string;
  inputTokens: number;
  outputTokens: number;
  /** Whose share it is taken from (fair share between tenants); absent: one tenant, `default`. */
  tenant?: string;
  /** Higher goes first among callers in line (default 0). */
  priority?: number;
}

export type TicketOutcome =
  | { kind: 'go' }
  /** Admitted for `at`: the caller waits until then, holding nothing. */
  | { kind: 'at'; at: number; limit: LimitName }
  /** Not admitted: `ahead` callers go first; the caller asks again at `recheckAt` and keeps its place. */
  | { kind: 'line'; recheckAt: number; limit: LimitName; ahead: number };

export type SlotOutcome = { kind: 'go' } | { kind: 'full'; recheckAt: number; ahead: number };

export const MINUTE_MS = 60_000;
/** A queued caller not seen again for this long after its recheck is dropped (a cancelled or dead run). */
export const QUEUE_GRACE_MS = 30_000;
/** The longest a refused caller waits before it asks for a slot again. */
export const SLOT_RECHECK_MAX_MS = 30_000;
/**
 * How far ahead tickets are handed out, in calls: beyond this, callers wait in line, where priority and
 * tenants' shares order them, instead of holding tickets in the order they asked.
 */
export const TICKET_HORIZON_CALLS = 4;
/** Callers in line at most per limit (the record stays one KV entry); beyond, a caller asks again later. */
export const MAX_LINE = 5_000;
/**
 * The longest a caller in line sleeps before it asks again, however far off its turn: a fallback in case an
 * estimate was wrong and every wake was lost. Short enough to bound that, long enough that 10,000 callers in
 * line ask again less than once a second between them.
 */
export const LINE_RECHECK_MAX_MS = 6 * 60 * 60_000;
/** A caller woken for its turn that has not asked again after this long is woken again (its wake was lost). */
export const LINE_WAKE_RETRY_MS = 30_000;
/** A caller whose turn came at most this much sooner than it was told is left to its own timer. */
export const LINE_WAKE_SLACK_MS = 1_000;
export const RATES: readonly { rate: Rate; per: keyof ModelLimit; name: LimitName }[] = [
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

export function costOf(rate: Rate, call: CallCost): number {
  return rate === 'requests' ? 1 : rate === 'input' ? call.inputTokens : call.outputTokens;
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
