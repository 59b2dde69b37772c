import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { runSubject } from '@dura/contracts';

/** Tells a follower of one run that its log may have grown. Wake-ups carry no data: the log is read by seq. */
export interface RunWaker {
  /**
   * Resolves `true` at the first wake-up since the previous call (at once if one already came), `false`
   * after `timeoutMs` or when `signal` aborts.
   */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  close(): void;
}

export interface RunWakeups {
  open(runId: string): RunWaker;
  /** Runs with a wake-up subscription open (one per run, however many followers). */
  subscribed(): number;
  close(): void;
}

interface Interest {
  sub: Subscription | undefined;
  generation: number;
  followers: number;
  waiters: Set<() => void>;
}

/**
 * Core-NATS wake-ups for followers of runs: one plain subscription on `dura.run.<runId>` (or `subjectOf`) per followed run,
 * shared by its followers and dropped with the last one. Unlike a consumer, it leaves nothing on the
 * server once unsubscribed or disconnected. A wake-up can come before the message is readable, or be lost
 * (a reconnect, a denied subscription): followers re-read after each and poll on a timer as well.
 */
export function createRunWakeups(
  nc: NatsConnection | undefined,
  subjectOf: (runId: string) => string = runSubject,
): RunWakeups {
  const interests = new Map<string, Interest>();
  let closed = false;

  function wake(interest: Interest): void {
    interest.generation += 1;
    for (const resolve of interest.waiters) resolve();
    interest.waiters.clear();
  }

  // Messages published while disconnected never arrive: wake every follower to re-read after a reconnect.
  if (nc)
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'reconnect') for (const interest of interests.values()) wake(interest);
      }
    })().catch(() => undefined);

  function subscribe(runId: string, interest: Interest): Subscription | undefined {
    if (!nc || nc.isClosed()) return undefined;
    try {
      return nc.subscribe(subjectOf(runId), { callback: () => wake(interest) });
    } catch {
      // Without wake-ups followers still poll; a permission error also ends up here or in `closed`.
      return undefined;
    }
  }

  function open(runId: string): RunWaker {
    let interest = interests.get(runId);
    if (!interest) {
      const fresh: Interest = { sub: undefined, generation: 0, followers: 0, waiters: new Set() };
      fresh.sub = subscribe(runId, fresh);
      interests.set(runId, fresh);
      interest = fresh;
    }
    const mine = interest;
    mine.followers += 1;
    let seen = mine.generation;
    let open = true;
    return {
      wait(timeoutMs, signal) {
        if (mine.generation !== seen || !open || closed) {
          seen = mine.generation;
          return Promise.resolve(open && !closed);
        }
        return new Promise<boolean>((resolve) => {
          const finish = (woken: boolean): void => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', aborted);
            mine.waiters.delete(woke);
            seen = mine.generation;
            resolve(woken);
          };
          const woke = (): void => finish(true);
          const aborted = (): void => finish(false);
          const timer = setTimeout(() => finish(false), timeoutMs);
          mine.waiters.add(woke);
          signal?.addEventListener('abort', aborted, { once: true });
          if (signal?.aborted) aborted();
        });
      },
      close() {
        if (!open) return;
        open = false;
        mine.followers -= 1;
        if (mine.followers > 0) return;
        interests.delete(runId);
        mine.sub?.unsubscribe();
        wake(mine);
      },
    };
  }

  return {
    open,
    subscribed: () => interests.size,
    close() {
      closed = true;
      for (const interest of interests.values()) {
        interest.sub?.unsubscribe();
        wake(interest);
      }
      interests.clear();
    },
  };
}

/**
 * The connection under a JetStream client: nats.js 3 keeps it as the client's public `nc` property without
 * declaring it on the interface. Undefined for anything else (followers then poll).
 */
export function connectionOf(js: object): NatsConnection | undefined {
  const nc = (js as { nc?: unknown }).nc;
  return typeof nc === 'object' && nc !== null && 'subscribe' in nc ? (nc as NatsConnection) : undefined;
}
