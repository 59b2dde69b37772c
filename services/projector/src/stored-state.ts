import { and, eq, gte, inArray, sql, type SQL } from 'drizzle-orm';
import type { RunState } from '@dura/core';
import type { Db } from '@dura/db';
import { runItems, runs } from './db/schema';

/*
 * How a run's state is stored: its lists that grow with the run, one row per entry in `run_items`; its request
 * (as long as its input, and fixed once the run is requested) in `runs.request`; the rest, bounded whatever
 * the run's length, in `runs.state`. Put back together, it is the fold of the run's log.
 */

/** The lists of a run's state that grow with every step or signal. */
export const RUN_STATE_LISTS = ['calls', 'turns', 'signals'] as const;
export type RunStateList = (typeof RUN_STATE_LISTS)[number];

export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/** A stored state, with the bytes of JSON its list entries took (an estimate of what holding it costs). */
export interface StoredState {
  state: RunState;
  listBytes: number;
}

/** What `runs.state` holds of `state`: all but its request and its lists. */
export function stateRow(state: RunState): Omit<RunState, RunStateList | 'request'> {
  const { calls: _calls, turns: _turns, signals: _signals, request: _request, ...rest } = state;
  return rest;
}

/** One `run_items` row, its entry as JSON text. */
export interface ItemRow {
  runId: string;
  list: RunStateList;
  idx: number;
  item: string;
}

/** A list that got shorter: its entries from `length` on go. */
export interface ShorterList {
  runId: string;
  list: RunStateList;
  length: number;
}

/**
 * The entries of `after`'s lists that the stored state `before` does not hold at the same index, and the lists
 * that got shorter. The fold copies a list it changes but not the entries it leaves alone, so an entry is
 * unchanged exactly when it is the same object: finding them costs a comparison per entry, no serialization.
 */
export function changedItems(
  runId: string,
  before: RunState | undefined,
  after: RunState,
): { rows: ItemRow[]; shorter: ShorterList[] } {
  const rows: ItemRow[] = [];
  const shorter: ShorterList[] = [];
  for (const list of RUN_STATE_LISTS) {
    const was: readonly unknown[] = before?.[list] ?? [];
    const now: readonly unknown[] = after[list];
    if (was === now) continue;
    now.forEach((item, idx) => {
      if (was[idx] !== item) rows.push({ runId, list, idx, item: JSON.stringify(item) });
    });
    if (now.length < was.length) shorter.push({ runId, list, length: now.length });
  }
  return { rows, shorter };
}

/**
 * Writes a batch's changed entries in one statement (a document Postgres unpacks, as the batch's events), and
 * drops the entries past the end of a shorter list, in the caller's transaction.
 */
export async function writeItems(
  tx: Tx,
  rows: readonly ItemRow[],
  shorter: readonly ShorterList[],
): Promise<void> {
  for (const { runId, list, length } of shorter)
    await tx
      .delete(runItems)
      .where(and(eq(runItems.runId, runId), eq(runItems.list, list), gte(runItems.idx, length)));
  if (rows.length === 0) return;
  const entries = rows.map(
    (r) => `{"runId":${JSON.stringify(r.runId)},"list":"${r.list}","idx":${r.idx},"item":${r.item}}`,
  );
  await tx.execute(sql`
    insert into ${runItems} (run_id, list, idx, item)
    select i->>'runId', i->>'list', (i->>'idx')::int, i->'item'
    from jsonb_array_elements(${`[${entries.join(',')}]`}::jsonb) as i
    on conflict (run_id, list, idx) do update set item = excluded.item`);
}

/** The stored states of those of `runIds` that have a row, put back together. */
export async function readStoredStates(
  tx: Tx | Db,
  runIds: readonly string[],
): Promise<Map<string, StoredState>> {
  const states = new Map<string, StoredState>();
  if (runIds.length === 0) return states;
  const [rows, items] = await Promise.all([
    tx
      .select({
        runId: runs.runId,
        state: sql<string>`${runs.state}::text`,
        request: sql<string | null>`${runs.request}::text`,
      })
      .from(runs)
      .where(inArray(runs.runId, [...runIds])),
    tx
      .select({
        runId: runItems.runId,
        list: runItems.list,
        idx: runItems.idx,
        item: sql<string>`${runItems.item}::text`,
      })
      .from(runItems)
      .where(inArray(runItems.runId, [...runIds])),
  ]);
  for (const row of rows) {
    const state = JSON.parse(row.state) as RunState;
    state.request = row.request === null ? null : (JSON.parse(row.request) as RunState['request']);
    for (const list of RUN_STATE_LISTS) state[list] = [];
    states.set(row.runId, { state, listBytes: 0 });
  }
  for (const { runId, list, idx, item } of items) {
    const stored = states.get(runId);
    if (!stored) continue;
    (stored.state[list as RunStateList] as unknown[])[idx] = JSON.parse(item);
    stored.listBytes += item.length;
  }
  return states;
}

/** The stored state of `runId`, put back together; undefined when the run has no row. */
export async function readStoredState(db: Db, runId: string): Promise<RunState | undefined> {
  return (await readStoredStates(db, [runId])).get(runId)?.state;
}

/**
 * SQL for the stored state of the `runs` row in scope as JSON text, with its request and its lists in `lists`
 * put back: the text `runs.state` held when it held the whole state (jsonb writes a value one way), built by
 * the database rather than parsed and serialized again here.
 */
export function storedStateText(lists: readonly RunStateList[] = RUN_STATE_LISTS): SQL<string> {
  const entries = lists.map(
    (list) =>
      sql`${list}::text, coalesce((select jsonb_agg(i.item order by i.idx) from ${runItems} i
            where i.run_id = ${runs.runId} and i.list = ${list}), '[]'::jsonb)`,
  );
  return sql<string>`(${runs.state} || jsonb_build_object('request', ${runs.request}${sql.join(
    entries.map((entry) => sql`, ${entry}`),
  )}))::text`;
}
