import type { ScheduleRecord } from '@dura/contracts';
import type { ScheduleStore, StoredSchedule } from '@dura/event-store';

/** A claimed decision unchanged this long (by the reader's own clock) is taken over: its replica died. */
export const DEFAULT_CLAIM_TIMEOUT_MS = 5_000;
const MAX_CLEAR_ATTEMPTS = 10;

export const hasPending = (record: ScheduleRecord): boolean =>
  record.pending.start.length > 0 || record.pending.cancel.length > 0;

/**
 * When another replica's claim counts as abandoned: once this replica has seen the schedule at the same KV
 * revision for `timeoutMs` of its own monotonic clock. Nothing compares two hosts' clocks, so a skewed clock
 * can neither steal a live claim nor keep a dead one.
 */
export function createClaimWatch(options: { timeoutMs: number; monotonic: () => number }) {
  const seen = new Map<string, { revision: number; at: number }>();
  return {
    abandoned(id: string, revision: number): boolean {
      const now = options.monotonic();
      const first = seen.get(id);
      if (first?.revision !== revision) {
        seen.set(id, { revision, at: now });
        return false;
      }
      return now - first.at >= options.timeoutMs;
    },
    forget(id: string): void {
      seen.delete(id);
    },
  };
}

/**
 * Removes what `published` held from the schedule's pending decision. A manual trigger may have added a run
 * meanwhile (the compare-and-set fails): it stays pending, for whoever takes it next.
 */
export async function clearPublished(store: ScheduleStore, published: StoredSchedule): Promise<void> {
  const id = published.record.spec.id;
  const started = new Set(published.record.pending.start.map((s) => s.runId));
  const cancelled = new Set(published.record.pending.cancel);
  let current: StoredSchedule | undefined = published;
  for (let attempt = 0; attempt < MAX_CLEAR_ATTEMPTS && current; attempt += 1) {
    const { pending } = current.record;
    const start = pending.start.filter((s) => !started.has(s.runId));
    const cancel = pending.cancel.filter((runId) => !cancelled.has(runId));
    if (start.length === pending.start.length && cancel.length === pending.cancel.length) return;
    const left = start.length > 0 || cancel.length > 0;
    const next: ScheduleRecord = {
      ...current.record,
      pending:
        left && pending.claimedBy !== undefined
          ? { start, cancel, claimedBy: pending.claimedBy }
          : { start, cancel },
    };
    if ((await store.compareAndSet(id, next, current.revision)) !== undefined) return;
    current = await store.read(id);
  }
}
