import { eq, inArray, sql } from 'drizzle-orm';
import { ContractViolation, runIdFromSubject, storableText, type RunEvent } from '@dura/contracts';
import { evolve, initialRunState, LruCache, type RunState } from '@dura/core';
import type { Db } from '@dura/db';
import { decodeStored } from '@dura/event-store';
import { failpoint } from '@dura/service-kit';
import { checkpoints, projectionErrors, runEvents, runs } from './db/schema';
import { summarize } from './run-summary';
import {
  changedItems,
  readStoredStates,
  stateRow,
  writeItems,
  type ItemRow,
  type ShorterList,
  type StoredState,
  type Tx,
} from './stored-state';
import { checkStorable } from './unstorable';

export interface StreamMessage {
  seq: number;
  subject: string;
  data: Uint8Array;
  /** The W3C trace context the event was appended in (its `traceparent` header). */
  traceparent?: string;
}

export const RUNS_CHECKPOINT = 'DURA_RUNS';

/** The projection's stored position in the run stream (0 before the first event). */
export async function readCheckpoint(db: Db): Promise<number> {
  const [row] = await db.select().from(checkpoints).where(eq(checkpoints.name, RUNS_CHECKPOINT));
  return row?.lastSeq ?? 0;
}

/**
 * Folded states this projector last stored, by run. A run's state at a sequence is the fold of its log up to
 * it, so a held state whose `lastSeq` is the stored row's `last_seq` is the stored state, and the batch
 * need not read it back from Postgres (a long run's state is hundreds of KB of JSON). A row another replica
 * moved on, or a transaction that rolled back, shows another `last_seq`: the state is read as before. A
 * batch reads every touched run's `last_seq` (a few bytes a run) in place of its state, and the state only
 * where it holds none at that sequence: no more statements than before while it holds the run.
 */
export type HeldStates = LruCache<string, StoredState>;

/** Up to 512 runs' states, 64 MB of their stored JSON. */
export const heldStates = (): HeldStates => new LruCache<string, StoredState>(512, 64 * 2 ** 20);

/**
 * Applies a contiguous batch of stream messages in ONE transaction with the checkpoint (DESIGN invariant 6).
 * Messages at or below the stored checkpoint are skipped, so a redelivered batch, or a second projector
 * replica racing this one, changes nothing. Returns the checkpoint after the batch.
 */
export async function applyBatch(
  db: Db,
  batch: readonly StreamMessage[],
  held?: HeldStates,
): Promise<{ checkpoint: number; applied: number }> {
  if (batch.length === 0) return { checkpoint: await readCheckpoint(db), applied: 0 };
  return db.transaction(async (tx) => {
    // Creates the checkpoint on first use and locks it in one statement: a racing replica waits here.
    const [position] = await tx
      .insert(checkpoints)
      .values({ name: RUNS_CHECKPOINT, lastSeq: 0 })
      .onConflictDoUpdate({ target: checkpoints.name, set: { name: sql`excluded.name` } })
      .returning({ lastSeq: checkpoints.lastSeq });
    const from = position?.lastSeq ?? 0;
    const fresh = batch.filter((msg) => msg.seq > from);
    if (fresh.length === 0) return { checkpoint: from, applied: 0 };

    const runIds = [
      ...new Set(
        fresh.map((msg) => runIdFromSubject(msg.subject)).filter((id): id is string => id !== undefined),
      ),
    ];
    const stored = await storedStates(tx, runIds, held);
    const states = new Map([...stored].map(([runId, { state }]) => [runId, state]));
    const eventRows: (typeof runEvents.$inferInsert)[] = [];
    const errorRows: (typeof projectionErrors.$inferInsert)[] = [];

    for (const msg of fresh) {
      const runId = runIdFromSubject(msg.subject);
      let event: RunEvent;
      try {
        event = decodeStored(msg);
        // The subject is the run's log: an event naming another run must not touch that run's state.
        if (event.meta.runId !== runId) {
          const where = `event at seq ${msg.seq} names run ${event.meta.runId}`;
          throw new ContractViolation(`${where} but was appended to ${msg.subject}`);
        }
        checkStorable(msg, event);
        const next = evolve(states.get(event.meta.runId) ?? initialRunState(), event);
        states.set(event.meta.runId, next);
      } catch (err) {
        const e = err as { code?: string; message: string; issues?: string[] };
        // The reason is stored too, and may quote the very text that could not be stored.
        const message = e.issues?.length ? `${e.message}: ${e.issues.join('; ')}` : e.message;
        errorRows.push({
          seq: msg.seq,
          runId: runId ?? null,
          code: storableText(e.code ?? 'projection_error'),
          message: storableText(message),
        });
        continue;
      }
      eventRows.push({ seq: event.seq, runId: event.meta.runId, type: event.type, event, ts: event.meta.ts });
    }

    // Rows go to Postgres as one JSON document and are unpacked there: building a parameter per column
    // per row in the query builder cost more than the rest of the batch.
    if (eventRows.length > 0)
      await tx.execute(sql`
        insert into ${runEvents} (seq, run_id, type, event, ts)
        select (e->>'seq')::bigint, e->>'runId', e->>'type', e->'event', (e->>'ts')::timestamptz
        from jsonb_array_elements(${JSON.stringify(eventRows)}::jsonb) as e
        on conflict do nothing`);
    failpoint('projector.mid-batch');
    if (errorRows.length > 0) await tx.insert(projectionErrors).values(errorRows).onConflictDoNothing();
    const touched = [...new Set(eventRows.map((row) => row.runId))];
    // The state row without its lists, and of the lists only the entries the batch added or changed: what a
    // batch writes does not grow with the run (see `run_items`).
    const itemRows: ItemRow[] = [];
    const shorter: ShorterList[] = [];
    const runRows = touched.map((runId) => {
      const state = states.get(runId) as RunState;
      const before = stored.get(runId);
      const changed = changedItems(runId, before?.state, state);
      itemRows.push(...changed.rows);
      shorter.push(...changed.shorter);
      const listBytes = changed.rows.reduce((sum, row) => sum + row.item.length, before?.listBytes ?? 0);
      // The request goes only when it changed (the run's first batch): the upsert keeps the stored one else.
      const request = before?.state.request === state.request ? {} : { request: state.request };
      const row = { ...summarize(runId, state), state: stateRow(state), ...request };
      return { row, held: { state, listBytes } };
    });
    await writeItems(tx, itemRows, shorter);
    const rowsJson = runRows.map(({ row }) => JSON.stringify(row));
    runRows.forEach(({ row, held: next }, i) =>
      held?.set(row.runId, next, (rowsJson[i]?.length ?? 0) + next.listBytes),
    );
    if (runRows.length > 0) {
      // Every touched run in one statement, each row taking the batch's final state and the columns derived
      // from it.
      await tx.execute(sql`
        insert into ${runs} (run_id, tenant, status, state, request, last_seq, event_count, steps, pending_calls,
                             last_error, input_tokens, output_tokens, tags, metadata, tools, created_at, updated_at)
        select r->>'runId', r->>'tenant', r->>'status', r->'state', r->'request', (r->>'lastSeq')::bigint,
               (r->>'eventCount')::int,
               (r->>'steps')::int, (r->>'pendingCalls')::int, r->'lastError', (r->>'inputTokens')::bigint,
               (r->>'outputTokens')::bigint, array(select jsonb_array_elements_text(r->'tags')), r->'metadata',
               array(select jsonb_array_elements_text(r->'tools')), (r->>'createdAt')::timestamptz,
               (r->>'updatedAt')::timestamptz
        from jsonb_array_elements(${`[${rowsJson.join(',')}]`}::jsonb) as r
        on conflict (run_id) do update set
          tenant = excluded.tenant, status = excluded.status, state = excluded.state,
          request = coalesce(excluded.request, runs.request), last_seq = excluded.last_seq,
          event_count = excluded.event_count, steps = excluded.steps, pending_calls = excluded.pending_calls,
          last_error = excluded.last_error, input_tokens = excluded.input_tokens,
          output_tokens = excluded.output_tokens, tags = excluded.tags, metadata = excluded.metadata,
          tools = excluded.tools, created_at = excluded.created_at, updated_at = excluded.updated_at`);
    }
    const checkpoint = (fresh.at(-1) as StreamMessage).seq;
    await tx.update(checkpoints).set({ lastSeq: checkpoint }).where(eq(checkpoints.name, RUNS_CHECKPOINT));
    return { checkpoint, applied: fresh.length };
  });
}

/**
 * The stored state of each of `runIds` that has a row: a held one where its sequence is the row's, the rest
 * read in one go.
 */
async function storedStates(
  tx: Tx,
  runIds: string[],
  held: HeldStates | undefined,
): Promise<Map<string, StoredState>> {
  const states = new Map<string, StoredState>();
  if (runIds.length === 0) return states;
  let unread = runIds;
  if (held) {
    const positions = await tx
      .select({ runId: runs.runId, lastSeq: runs.lastSeq })
      .from(runs)
      .where(inArray(runs.runId, runIds));
    unread = [];
    for (const { runId, lastSeq } of positions) {
      const state = held.get(runId);
      if (state !== undefined && state.state.lastSeq === Number(lastSeq)) states.set(runId, state);
      else unread.push(runId);
    }
  }
  if (unread.length === 0) return states;
  for (const [runId, state] of await readStoredStates(tx, unread)) states.set(runId, state);
  return states;
}
