import type { DbHandle, NotifyHandler, Unlisten } from '@dura/db';
import type { Logger } from '@dura/service-kit';

const LISTEN_RETRY_MS = 1_000;

export interface WakeLoopOptions {
  /** How to LISTEN; undefined: the loop only polls. */
  listen: DbHandle['listen'] | undefined;
  /** The channel whose NOTIFYs (new rows committed) wake the loop. */
  channel: string;
  /** What a NOTIFY does; `wake` when unset. Re-established LISTENs always wake (notifications may be lost). */
  onNotify?: NotifyHandler;
  log: Logger;
  /** The warning logged after each failed LISTEN; the loop polls meanwhile. */
  listenWarning: string;
  /** One pass of the loop; resolves with how long to nap before the next one, or undefined: the next at once. */
  turn: () => Promise<number | undefined>;
}

/**
 * A polling loop over Postgres rows (the outbox relay, the timer firing loop) that new work cuts short: it
 * naps between passes until `wake()`, a NOTIFY on `channel`, or the nap's end. A `wake()` during a pass makes
 * the next pass start at once instead of napping. LISTEN is retried until it succeeds once (the listener
 * itself re-listens after connection loss) or the loop stops.
 */
export function createWakeLoop(options: WakeLoopOptions) {
  const { listen, log } = options;
  let running = false;
  let woken = false;
  let wakeUp: (() => void) | undefined;
  let loop: Promise<void> | undefined;
  let listening: Promise<Unlisten | undefined> | undefined;

  const wake = (): void => {
    woken = true;
    wakeUp?.();
  };

  /** Sleeps up to `ms`, or until `wake()` or a stop. */
  async function nap(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wakeUp = undefined;
  }

  async function run(): Promise<void> {
    while (running) {
      woken = false;
      const napMs = await options.turn();
      if (napMs !== undefined && running && !woken) await nap(napMs);
    }
  }

  async function subscribe(): Promise<Unlisten | undefined> {
    if (!listen) return undefined;
    while (running) {
      try {
        return await listen(options.channel, options.onNotify ?? wake, wake);
      } catch (err) {
        log.warn(options.listenWarning, { err });
        await new Promise((resolve) => setTimeout(resolve, LISTEN_RETRY_MS));
      }
    }
    return undefined;
  }

  return {
    wake,
    /** Between `start()` and `stop()`. */
    get running(): boolean {
      return running;
    },
    start: (): void => {
      running = true;
      listening = subscribe();
      loop = run();
    },
    /** Ends the loop: a nap at once, a pass once it is done. */
    stop: async (): Promise<void> => {
      running = false;
      wakeUp?.();
      await loop;
    },
    /** Stops listening (after `stop()`). */
    unlisten: async (): Promise<void> => {
      const unlisten = await listening;
      await unlisten?.().catch(() => undefined);
    },
  };
}
