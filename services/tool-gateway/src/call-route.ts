import type { NewEvent } from '@dura/contracts';
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
  /**
   * Present on a route that may publish the result of a read-only call run without a claim straight to its
   * run's log, with no ledger row and no outbox row: the call changed nothing outside its result, and the
   * log, not the ledger, is where that result is kept. `record` writes row and outbox row after all (when the
   * publish fails), and hands back what `deliver` would have been given. False when that record found the
   * key's row already there: the call then goes the claimed way, as a conflict does.
   */
  readonly sendUnrecorded?: (observation: NewEvent, record: () => Promise<Finished>) => Promise<boolean>;
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
