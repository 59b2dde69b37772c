import type { DbHandle, NotifyHandler, Unlisten } from '@dura/db';
import type { Logger } from '@dura/service-kit';

const LISTEN_RETRY_MS = 1_000;

/**
 * The sleep of a polling loop (the outbox relay, the timer firing loop) that new work cuts short: `nap(ms)`
 * sleeps up to `ms` or until `wake()`. `woken` says whether `wake()` came since the loop last `clear`ed it, so
 * a pass that raced new work runs again instead of sleeping; `interrupt()` ends a nap without that (on stop).
 */
export function createAlarm() {
  let woken = false;
  let wakeUp: (() => void) | undefined;
  return {
    get woken(): boolean {
      return woken;
    },
    clear: (): void => {
      woken = false;
    },
    wake: (): void => {
      woken = true;
      wakeUp?.();
    },
    interrupt: (): void => {
      wakeUp?.();
    },
    /** Sleeps up to `ms`, or until `wake()` or `interrupt()`. */
    nap: async (ms: number): Promise<void> => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = undefined;
    },
  };
}

export type Alarm = ReturnType<typeof createAlarm>;

/**
 * LISTENs on `channel` until it succeeds once (the listener itself re-listens after connection loss) or
 * `running()` turns false, logging `warning` after each failed attempt while the loop polls meanwhile.
 * Undefined without a way to LISTEN.
 */
export async function listenWhileRunning(options: {
  listen: DbHandle['listen'] | undefined;
  channel: string;
  onNotify: NotifyHandler;
  onListening: () => void;
  running: () => boolean;
  log: Logger;
  warning: string;
}): Promise<Unlisten | undefined> {
  const { listen, log } = options;
  if (!listen) return undefined;
  while (options.running()) {
    try {
      return await listen(options.channel, options.onNotify, options.onListening);
    } catch (err) {
      log.warn(options.warning, { err });
      await new Promise((resolve) => setTimeout(resolve, LISTEN_RETRY_MS));
    }
  }
  return undefined;
}
