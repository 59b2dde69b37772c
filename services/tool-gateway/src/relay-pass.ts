import { and, asc, inArray, isNull, sql } from 'drizzle-orm';
import { rowsOf, type Db } from '@dura/db';
import { failpoint } from '@dura/service-kit';
import { outbox } from './db/schema';
import type { OutboxRow, PublishObservation } from './outbox-publish';

/** A row is free for a relay pass when its writer's claim is absent or has run out (by the database clock). */
const unclaimed = sql`(${outbox.claimedUntil} is null or ${outbox.claimedUntil} <= now())`;

/**
 * One relay pass: relays up to `batchSize` rows and resolves with how many it sent; throws (after recording
 * what was sent) when a publish failed. A pass takes a transaction-scoped advisory lock per run and relays
 * only the runs it locked, each in outbox-id order, so several replicas relay side by side without breaking
 * any run's order.
 */
export function createRelayPass(options: {
  db: Db;
  batchSize: number;
  publish: PublishObservation;
  /** Called for each row this pass published. */
  onPublished: () => void;
}): () => Promise<number> {
  const { db, batchSize, publish } = options;

  /** Takes the runs of the oldest unsent, unclaimed rows that no other relay is relaying right now. */
  async function lockRuns(tx: Db): Promise<string[]> {
    const result = await tx.execute(sql`
      with candidates as materialized (
        select run_id, min(id) as first_id
        from (select id, run_id from ${outbox} where sent_at is null and ${unclaimed}
              order by id limit ${batchSize}) oldest
        group by run_id
      )
      select run_id from candidates
      where pg_try_advisory_xact_lock(hashtext('dura_outbox_relay'), hashtext(run_id))
      order by first_id`);
    return rowsOf<{ run_id: string }>(result).map((row) => row.run_id);
  }

  /** Publishes one run's rows in order, stopping at the first failure so nothing overtakes it. */
  async function publishRun(rows: readonly OutboxRow[], sent: number[]): Promise<Error | undefined> {
    for (const row of rows) {
      try {
        await publish(row);
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
      sent.push(row.id);
      options.onPublished();
    }
    return undefined;
  }

  return async function relayOnce(): Promise<number> {
    const { sent, failure } = await db.transaction(async (tx) => {
      const runs = await lockRuns(tx);
      if (runs.length === 0) return { sent: [], failure: undefined };
      // Re-read under the locks: a relay that held one a moment ago may have sent these rows since. A row
      // its writer still claims is left to the writer, and so is every later row of its run, to keep order;
      // they are not locked either, so the writer's mark is not held up by this pass.
      const rows = await tx
        .select()
        .from(outbox)
        .where(
          and(
            isNull(outbox.sentAt),
            inArray(outbox.runId, runs),
            sql`not exists (
              select 1 from ${outbox} as claimed
              where claimed.run_id = ${outbox.runId} and claimed.sent_at is null
                and claimed.id <= ${outbox.id} and claimed.claimed_until > now())`,
          ),
        )
        .orderBy(asc(outbox.id))
        .limit(batchSize)
        .for('update');
      const byRun = new Map<string, OutboxRow[]>();
      for (const row of rows) byRun.set(row.runId, [...(byRun.get(row.runId) ?? []), row]);
      const sent: number[] = [];
      // Runs are independent, so they go out concurrently; within a run, one after the other.
      const failures = await Promise.all([...byRun.values()].map((runRows) => publishRun(runRows, sent)));
      if (sent.length > 0) {
        failpoint('relay.after-publish');
        await tx.update(outbox).set({ sentAt: new Date() }).where(inArray(outbox.id, sent));
      }
      return { sent, failure: failures.find((err) => err !== undefined) };
    });
    if (failure !== undefined) throw failure;
    return sent.length;
  };
}
