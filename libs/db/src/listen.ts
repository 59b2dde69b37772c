import postgres from 'postgres';
import { DuraError } from '@dura/contracts';
import { redact } from './connect-error';
import { DEFAULT_ANSWER_TIMEOUT_MS, seconds, withinDeadline } from './start-bounds';
import type { Db, DbHandle, NotifyHandler, Unlisten } from './db-handle';

const RELISTEN_PAUSE_MS = 500;

/** Reconnect quickly after a server restart: 0.1 s, 0.2 s, 0.4 s … at most 1 s (postgres.js defaults reach 20 s). */
export function reconnectBackoff(retries: number): number {
  return Math.min(0.05 * 2 ** retries, 1);
}

/**
 * LISTEN on a dedicated connection that is re-established whenever it drops. postgres.js's own `listen`
 * re-listens too, but gives up silently when the server is still down at that moment, and backs off up to 20 s.
 */
export async function listenPostgres(
  url: string,
  channel: string,
  onNotify: NotifyHandler,
  onListening?: () => void,
): Promise<Unlisten> {
  let stopped = false;
  let relistening = false;
  const quoted = `"${channel.replace(/"/g, '""')}"`;
  // `onnotify` is the option postgres.js's own listen() is built on; its typings leave it out.
  const options: postgres.Options<Record<string, never>> & {
    onnotify: (name: string, payload: string) => void;
  } = {
    max: 1,
    idle_timeout: 0,
    max_lifetime: null,
    fetch_types: false,
    connect_timeout: 10,
    backoff: reconnectBackoff,
    onnotice: () => undefined,
    onnotify: (name, payload) => {
      if (name === channel) onNotify(payload);
    },
    onclose: () => {
      if (!stopped) void relisten();
    },
  };
  const sql = postgres(url, options);

  const listenOnce = async (): Promise<void> => {
    await sql.unsafe(`listen ${quoted}`);
    onListening?.();
  };

  async function relisten(): Promise<void> {
    if (relistening) return;
    relistening = true;
    try {
      while (!stopped) {
        try {
          await listenOnce();
          return;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, RELISTEN_PAUSE_MS));
        }
      }
    } finally {
      relistening = false;
    }
  }

  try {
    // Bounded: past setting the connection up (connect_timeout), a server that stopped answering would keep
    // the LISTEN, and whoever awaits it (a relay's start, then its stop), waiting silently.
    await withinDeadline(
      listenOnce(),
      DEFAULT_ANSWER_TIMEOUT_MS,
      () =>
        new DuraError(
          'database_unreachable',
          `Postgres at ${redact(url)} did not answer LISTEN ${quoted} within ${seconds(DEFAULT_ANSWER_TIMEOUT_MS)}; ` +
            'check that the server is up and not stalled',
          { retryable: true },
        ),
      () => {
        stopped = true;
        return sql.end({ timeout: 0 });
      },
    );
  } catch (err) {
    stopped = true;
    await sql.end({ timeout: 0 });
    throw err;
  }
  return async () => {
    stopped = true;
    await sql.end({ timeout: 1 });
  };
}

// Lets code that was handed only a `Db` (the drizzle object) find the handle that can LISTEN for it, so a
// service's factories need no extra port to benefit from notifications.
const handles = new WeakMap<Db, DbHandle>();

/** Remembers `handle` as the owner of `handle.db`; returns it. */
export function register(handle: DbHandle): DbHandle {
  handles.set(handle.db, handle);
  return handle;
}

/** The `listen` of the handle that opened `db`, or undefined when `db` did not come from `openDatabase`. */
export function listenerFor(db: Db): DbHandle['listen'] | undefined {
  const handle = handles.get(db);
  return handle ? handle.listen.bind(handle) : undefined;
}
