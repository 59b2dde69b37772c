/**
 * Drives of one run take turns in this process, so two decide tasks arriving together (a restart, a
 * redelivery next to a new observation) cannot both ask the model for the same decision: the second
 * finds the first one's decision in the cached log. Across replicas, the guarded append decides.
 */
export interface RunTurns {
  /** Runs `drive` once the run's earlier drives in this process have ended (whether or not they failed). */
  take<T>(runId: string, drive: () => Promise<T>): Promise<T>;
  /** Whether a drive of the run is under way in this process. */
  has: (runId: string) => boolean;
  /** How many runs this process is driving right now. */
  size: () => number;
}

export function createRunTurns(): RunTurns {
  /** The drive of each run under way in this process. */
  const turns = new Map<string, Promise<unknown>>();
  return {
    async take(runId, drive) {
      const previous = turns.get(runId);
      const mine = (previous ?? Promise.resolve()).catch(() => undefined).then(() => drive());
      turns.set(runId, mine);
      try {
        return await mine;
      } finally {
        if (turns.get(runId) === mine) turns.delete(runId);
      }
    },
    has: (runId) => turns.has(runId),
    size: () => turns.size,
  };
}
