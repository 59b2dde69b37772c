import { sql } from 'drizzle-orm';
import type { ToolTask } from '@dura/contracts';
import { rowsOf, type Db } from '@dura/db';
import { effects } from './db/schema';

/** A new key's claim: a `started` row for its first attempt. */
export interface ClaimInsert {
  task: ToolTask;
  startedAt: Date;
  leaseUntil: Date;
}

/**
 * Inserts the `started` rows of several new keys in one statement; each item learns whether its row went
 * in (its attempt number) or its key already had one (undefined). Of two items with the same key only the
 * first can have inserted it. Keys go in sorted, so two replicas inserting the same keys at once wait on
 * each other in one order instead of deadlocking. Unless `durable`, the statement's implicit transaction commits without
 * waiting for the WAL flush (`set_config(..., true)` lasts until that transaction ends).
 */
export async function insertClaims(
  db: Db,
  items: readonly ClaimInsert[],
  durable: boolean,
): Promise<(number | undefined)[]> {
  const input = items.map(({ task, startedAt, leaseUntil }) => ({
    key: task.idempotencyKey,
    run_id: task.runId,
    call_id: task.callId,
    step: task.step,
    tool: task.tool,
    args: JSON.stringify(task.args),
    lease_until: leaseUntil.toISOString(),
    started_at: startedAt.toISOString(),
  }));
  const rows = rowsOf<{ key: string; attempts: number }>(
    await db.execute(sql`
      insert into ${effects} (idempotency_key, run_id, call_id, step, tool, args, status, attempts,
                              lease_until, started_at)
      select key, run_id, call_id, step, tool, args::jsonb, 'started', 1, lease_until, started_at
      from jsonb_to_recordset(${JSON.stringify(input)}::jsonb) as x(
        key text, run_id text, call_id text, step int, tool text, args text, lease_until timestamptz,
        started_at timestamptz)
      where ${durable ? sql`true` : sql`set_config('synchronous_commit', 'off', true) is not null`}
      order by key
      on conflict do nothing
      returning idempotency_key as key, attempts`),
  );
  const inserted = new Map(rows.map((row) => [row.key, row.attempts]));
  return items.map(({ task }) => {
    const attempts = inserted.get(task.idempotencyKey);
    inserted.delete(task.idempotencyKey);
    return attempts;
  });
}
