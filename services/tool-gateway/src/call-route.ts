import type { Finished } from './effect-ledger';
import type { Relay } from './relay';

/**
 * Which way a call came, as far as its attempts care: whether an attempt reads its run's cancellation before
 * it starts, and where the observation it recorded goes. A tool task's route is `taskRoute`; a call run in
 * place has its own (`createInPlaceCalls`).
 */
export interface CallRoute {
  /**
   * Read the run's cancellation before the attempt starts. A call run in place comes from a drive that has
   * just folded its run's log through the intent and found no cancellation in it; one recorded after that
   * reaches the call through the watcher, which aborts it.
   */
  readonly readCancellation: boolean;
  /** Hands on an observation just recorded (`Finished`): published at once when it may be, else by the relay. */
  deliver(finished: Finished): Promise<void>;
}

/**
 * Whether a recorded observation must go the relay's way: it was queued before, or rows of its run are ahead
 * of it. Then the relay is woken; a pass leaves a run alone while a row of it is published but not marked,
 * so those marks are written first.
 */
export function leftToRelay(finished: Finished, relay: Relay): boolean {
  if (finished.queued && !finished.ahead) return false;
  void relay.flushMarks().finally(() => relay.wake());
  return true;
}

/** A call from a tool task: its observation is published at once, with a decide task for the planner. */
export function taskRoute(relay: Relay): CallRoute {
  return {
    readCancellation: true,
    async deliver(finished) {
      if (leftToRelay(finished, relay) || !finished.queued) return;
      await relay.sendNow(finished.queued, { nudge: true });
    },
  };
}
