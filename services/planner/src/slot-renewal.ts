import { renewSlot } from '@dura/core';
import type { FlowStore } from './flow-store';

/**
 * A slow call keeps its concurrency slots: their leases are renewed every third of a lease until the call
 * settles (the caller clears the timer), so a lease runs out only when its holder stopped (killed, paused),
 * not while a loaded process waits on the provider. Undefined when the call holds no slot.
 */
export function renewWhileInFlight(
  deps: { store: FlowStore; leaseMs: number; clock: () => number },
  slotted: readonly { key: string }[],
  slot: string,
): NodeJS.Timeout | undefined {
  if (slotted.length === 0) return undefined;
  const live = new Set(slotted.map(({ key }) => key));
  const timer = setInterval(
    () => {
      for (const key of live)
        deps.store
          .update(key, (record) => {
            const renewed = renewSlot(record, slot, deps.leaseMs, deps.clock());
            return { record: renewed.record, result: renewed.lost };
          })
          .then((lost) => {
            // Run out already: the slot may be another call's now; nothing is taken anew.
            if (lost) live.delete(key);
          })
          .catch(() => {
            // A renewal lost to a NATS hiccup is tried again at the next tick, well within the lease.
          });
    },
    Math.max(250, Math.floor(deps.leaseMs / 3)),
  );
  timer.unref();
  return timer;
}
