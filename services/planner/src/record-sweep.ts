import type { Logger } from '@dura/service-kit';

/** How often the bucket's keys are listed for records created or deleted meanwhile. */
const LIST_EVERY_MS = 1000;

/**
 * The delay before a replica's next pass: `pollMs` on average, anywhere in [pollMs / 2, 3 · pollMs / 2).
 * With a fixed interval, replicas keep their phase: the one whose passes come first after each tick decides
 * most ticks. A random delay per pass gives every replica an even chance.
 */
export function nextPassDelay(pollMs: number, random: () => number): number {
  return Math.round(pollMs * (0.5 + random()));
}

export interface RecordSweepOptions {
  /** The keys of the bucket's records, listed at most once a second. */
  listKeys: () => Promise<string[]>;
  /** Handles one record; false when it was found deleted: its key is not visited again until the next listing. */
  visit: (key: string) => Promise<boolean>;
  /** How often a pass runs, on average (see `nextPassDelay`). */
  pollMs: number;
  log: Logger;
  /** The log field that names the key of a record whose visit failed, and the warning logged then. */
  keyField: string;
  visitFailed: string;
  /** The warning logged when a whole pass failed (the keys could not be listed). */
  passFailed: string;
}

/**
 * Passes over every record of a KV bucket on every replica (the schedules, the debounce windows), one visit
 * per record per pass; a visit that fails is logged and retried on the next pass. The bucket's keys are listed
 * once a second, not on every pass; a pass reads each known record by key (a direct get).
 */
export function createRecordSweep(options: RecordSweepOptions) {
  const { log } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let known: { keys: string[]; at: number; gone: Set<string> } | undefined;

  async function pass(): Promise<void> {
    const now = Date.now();
    if (!known || now - known.at >= LIST_EVERY_MS)
      known = { keys: await options.listKeys(), at: now, gone: new Set() };
    const { keys, gone } = known;
    for (const key of keys) {
      if (stopped) return;
      if (gone.has(key)) continue;
      try {
        if (!(await options.visit(key))) gone.add(key);
      } catch (err) {
        log.warn(options.visitFailed, { [options.keyField]: key, err });
      }
    }
  }

  function loop(): void {
    if (stopped) return;
    running = pass()
      .catch((err: unknown) => log.warn(options.passFailed, { err }))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, nextPassDelay(options.pollMs, Math.random));
      });
  }

  return {
    /** One pass over every record. */
    pass,
    start: (): void => {
      stopped = false;
      loop();
    },
    stop: async (): Promise<void> => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
