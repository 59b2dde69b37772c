import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '@dura/db';
import type { Logger } from '@dura/service-kit';
import { outbox } from './db/schema';

/**
 * How long a published row may wait for its mark: marks made meanwhile share one UPDATE, and most ride on
 * the next result's commit instead (`take`). Far below `FAST_PATH_LEASE_MS`, so no relay pass takes a
 * published row for one that needs publishing.
 */
const MARK_LINGER_MS = 100;

/**
 * The marks "sent" of outbox rows published at once by their writer (`Relay.sendNow`). A mark is not waited
 * for: until it is written the row is published-unmarked, and a pass that re-sends it after its claim runs
 * out only makes the log drop a duplicate. Marks made meanwhile go out in one UPDATE, or with the next
 * result's commit (`take`/`written`, which the effect ledger calls).
 */
export function createOutboxMarks(options: {
  db: Db;
  log: Logger;
  /** Rows of the marked rows' runs wait behind them: a relay pass should come at once. */
  onRowsBehind: () => void;
}) {
  const { db, log } = options;
  /** Published rows whose mark is not written yet, and when the UPDATE that writes them goes out. */
  let pending: number[] = [];
  let timer: NodeJS.Timeout | undefined;
  /** UPDATEs of marks on their way. */
  const marking = new Set<Promise<void>>();
  /** Rows published at once whose mark is still on its way. */
  const unmarked = new Set<number>();

  /** A row just published: its mark goes out within `MARK_LINGER_MS`, or sooner with another statement. */
  function published(id: number): void {
    unmarked.add(id);
    pending.push(id);
    timer ??= setTimeout(() => void flush(), MARK_LINGER_MS);
  }

  /**
   * Hands the marks not written yet to a statement of the caller's (a result's commit), which marks them
   * sent with its own; `written` says how that went. Until then they stay published-unmarked.
   */
  function take(): number[] {
    const ids = pending;
    pending = [];
    clearTimeout(timer);
    timer = undefined;
    return ids;
  }

  /** The caller's statement marked `ids` sent (`ok`), or failed and gives them back to be marked here. */
  function written(ids: readonly number[], ok: boolean): void {
    if (ok) {
      for (const id of ids) unmarked.delete(id);
      return;
    }
    pending.push(...ids);
    if (pending.length > 0) timer ??= setTimeout(() => void flush(), MARK_LINGER_MS);
  }

  /** Writes the marks not written yet now; settles when every mark on its way is written (or failed). */
  async function flush(): Promise<void> {
    const ids = take();
    if (ids.length > 0) {
      const write = markSent(ids)
        .catch((err: unknown) => {
          log.warn('marking published observations sent failed; a later pass re-sends them', { err });
        })
        .finally(() => {
          for (const id of ids) unmarked.delete(id);
          marking.delete(write);
        });
      marking.add(write);
    }
    await Promise.all(marking);
  }

  /**
   * Marks rows sent in one UPDATE. Rows a pass holds are skipped, not waited for (a pass takes a claimed row
   * only once its claim ran out): that pass publishes and marks them itself, and if its process dies they
   * stay unsent and the next pass publishes them again (the log drops the duplicate). When rows of the same
   * runs wait behind the marked ones (queued while these were claimed), `onRowsBehind` is called.
   */
  async function markSent(ids: readonly number[]): Promise<void> {
    const list = `{${ids.join(',')}}`;
    // The outer select sees the snapshot before the update, so it leaves the marked ids out itself. The
    // mark commits without waiting for the WAL flush: a mark lost in a database crash only means the row
    // is published again, and the log drops the duplicate by its msg-id.
    const [result] = rowsOf<{ behind: boolean }>(
      await db.execute(sql`
        with marked as (
          update ${outbox} set sent_at = ${new Date().toISOString()}::timestamptz
          where id in (select id from ${outbox} where id = any(${list}::bigint[]) and sent_at is null
                       for update skip locked)
            and set_config('synchronous_commit', 'off', true) is not null
          returning run_id
        )
        select exists (
          select 1 from ${outbox}
          where sent_at is null and not (id = any(${list}::bigint[])) and run_id in (select run_id from marked)
        ) as behind`),
    );
    if (result?.behind) options.onRowsBehind();
  }

  return {
    published,
    take,
    written,
    flush,
    /** Rows published at once and not marked sent yet: they are in the log. */
    publishedUnmarked: (): number[] => [...unmarked],
  };
}

export type OutboxMarks = ReturnType<typeof createOutboxMarks>;
