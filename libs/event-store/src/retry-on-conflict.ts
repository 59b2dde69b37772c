import { ConcurrencyConflict } from './errors';

export interface RetryOnConflictOptions {
  /** Races an attempt may lose before the conflict is given up on. */
  maxConflicts: number;
  /** Called after each lost race (`conflicts` counts them, from 1), before the next attempt or giving up. */
  onConflict?: (conflicts: number, err: ConcurrencyConflict) => void;
  /** The error thrown once more than `maxConflicts` races are lost; default the last conflict itself. */
  giveUp?: (conflicts: number, err: ConcurrencyConflict) => Error;
}

/**
 * Runs `attempt` until it does not lose an append race. An attempt re-reads the log and re-decides from
 * what it finds (another writer's append may have made its own unnecessary): a guarded append that loses
 * throws `ConcurrencyConflict`, and the attempt runs again, a bounded number of times. Other errors pass.
 */
export async function retryOnConflict<T>(
  attempt: () => Promise<T>,
  options: RetryOnConflictOptions,
): Promise<T> {
  for (let conflicts = 0; ;) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ConcurrencyConflict)) throw err;
      conflicts += 1;
      options.onConflict?.(conflicts, err);
      if (conflicts > options.maxConflicts) throw options.giveUp?.(conflicts, err) ?? err;
    }
  }
}
