import { type DuraError } from '@dura/contracts';

/** How long a service's start-up waits on Postgres, and whom it tells what it waits for. */
export interface StartBounds {
  /** How long a query at start-up (the first one, the migration lock's, the migrations) may go unanswered (default 15 s). */
  answerTimeoutMs?: number;
  /** How long the migrations wait for the lock another session holds before failing (default 120 s). */
  migrationLockWaitMs?: number;
  /** Told, in a sentence, what the start-up waits for while it waits (e.g. the migration lock and its holder). */
  onWaiting?: (reason: string) => void;
}

export const DEFAULT_ANSWER_TIMEOUT_MS = 15_000;
export const DEFAULT_MIGRATION_LOCK_WAIT_MS = 120_000;
/** Applying the migrations themselves: long enough for a real schema change, not forever. */
export const MIGRATIONS_TIMEOUT_MS = 300_000;

/**
 * `work`, or `onLate()`'s error when it has not settled within `ms`; then `abandon` runs first, to close what
 * `work` waits on. postgres.js bounds only setting a connection up (`connect_timeout`, until the server's first
 * ReadyForQuery): a query after that, the array-types read every new connection makes first included, waits
 * as long as the server stays silent.
 */
export async function withinDeadline<T>(
  work: Promise<T>,
  ms: number,
  onLate: () => DuraError,
  abandon: () => Promise<unknown>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  // Settled later, after an abandon, work's rejection is expected: it must not go unhandled.
  work.catch(() => undefined);
  try {
    const first = await Promise.race([work.then((value) => ({ value })), late]);
    if (first !== 'late') return first.value;
  } finally {
    clearTimeout(timer);
  }
  await abandon().catch(() => undefined);
  throw onLate();
}

/** `ms` as seconds for a message: "2 s", "1.5 s". */
export function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
