import { RetryLater } from '@dura/service-kit';

/**
 * A claim's lease covers the tool's timeout plus the margin, counted from the claim: an effect started later
 * than the margin after it could still run when the lease ran out and another replica took the call over
 * (this process stood still: a pause, a stop-the-world, a swapped-out host). It is not started; the task
 * comes again and the call is settled by whoever holds it then. Monotonic time: wall clock steps do not count.
 */
export function assertLeaseHolds(key: string, claimedAt: number, marginMs: number): void {
  const idleMs = performance.now() - claimedAt;
  if (idleMs <= marginMs) return;
  throw new RetryLater(
    `the claim on ${key} was made ${Math.round(idleMs)} ms ago, more than the lease margin (${marginMs} ms): its effect is not started, another replica may hold the call by now`,
    0,
  );
}

/**
 * An attempt that lost its key before it finished (another replica took the call over, or a database crash
 * lost an unflushed claim): its outcome is dropped, and the task comes again to be settled by the ledger.
 */
export function fencedOut(key: string, attempt: number): never {
  throw new RetryLater(
    `attempt ${attempt} of ${key} no longer held its claim when it finished; its outcome is dropped and the ledger settles the call`,
    0,
  );
}
