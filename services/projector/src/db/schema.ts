import { bigint, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * One row per run: the fold of its log (a cache: drop it and replay the stream to rebuild it). `state` and
 * `request`, with the run's `run_items`, are the fold itself; every other column is derived from it in the same
 * statement (`summarize`), for lists and filters that must not read the whole state.
 *
 * Index plan for `GET /runs` (keyset pages, never OFFSET; every query shape is answered from an index, and an
 * ordered one stops after `limit + 1` rows; `test/list-runs.int.spec.ts` checks that those never sort):
 * - `runs_updated_idx (updated_at, run_id)`: the default sort (`updated_desc`, scanned backwards), with the
 *   cursor as a row comparison `(updated_at, run_id) < (…)` inside the index condition, so a deep page costs
 *   what the first page costs.
 * - `runs_created_idx (created_at, run_id)`: `created_desc` / `created_asc`, and the `createdAfter` /
 *   `createdBefore` range under any sort.
 * - `runs_status_updated_idx (status, updated_at, run_id)`: one status under the default sort, the
 *   dashboard's question ("what is waiting now"): equality on the prefix, then the same ordered range, however
 *   rare the status. For a common status (or several, or a `created_*` sort) walking the ordered index above
 *   and filtering finds a page as quickly; the planner picks by the column's statistics.
 * - `runs_tags_idx`, `runs_tools_idx` (GIN): `tags @> {…}` and `tools @> {…}`. A rare tag or tool is read
 *   through the GIN index and its rows sorted; a common one walks the ordered index and filters, stopping at
 *   the page's end; array statistics (`most_common_elems`) let the planner choose. New entries wait in the
 *   index's pending list, which every GIN search reads in full until vacuum (or the limit) merges it: 256 kB
 *   instead of the default 4 MB bounds that read to about a millisecond.
 * - `runs_tenant_updated_idx (tenant, updated_at, run_id)`: a tenant-scoped caller's default list (an API with
 *   authentication on adds `tenant = …` to every query), as one range scan like the unscoped one.
 * Every index is written on each upsert of a run (the sort keys change with every event, so updates are
 * never HOT); the projector upserts each touched run once per batch, not once per event, which bounds that.
 */
export const runs = pgTable(
  'runs',
  {
    runId: text('run_id').primaryKey(),
    /** The run's tenant (`RunState.tenant`): the API shows a caller only rows of its own. */
    tenant: text('tenant').notNull().default('default'),
    status: text('status').notNull(),
    /** The state but for its request and its lists (stored apart: see `run_items`). */
    state: jsonb('state').notNull(),
    /**
     * The state's `request`: fixed once the run is requested, and as long as its input (a scripted run's whole
     * plan), so an upsert sets it only when it changed and Postgres keeps the stored value as it is.
     */
    request: jsonb('request'),
    lastSeq: bigint('last_seq', { mode: 'number' }).notNull(),
    eventCount: integer('event_count').notNull(),
    steps: integer('steps').notNull(),
    pendingCalls: integer('pending_calls').notNull(),
    /** `{code, message}`, or null: see `summarize`. */
    lastError: jsonb('last_error'),
    inputTokens: bigint('input_tokens', { mode: 'number' }).notNull(),
    outputTokens: bigint('output_tokens', { mode: 'number' }).notNull(),
    tags: text('tags').array().notNull(),
    metadata: jsonb('metadata').notNull(),
    /** Every tool the run requested a call of, once each. */
    tools: text('tools').array().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'string' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'string' }).notNull(),
  },
  (t) => [
    index('runs_updated_idx').on(t.updatedAt, t.runId),
    index('runs_created_idx').on(t.createdAt, t.runId),
    index('runs_status_updated_idx').on(t.status, t.updatedAt, t.runId),
    index('runs_tenant_updated_idx').on(t.tenant, t.updatedAt, t.runId),
    index('runs_tags_idx').using('gin', t.tags).with({ gin_pending_list_limit: 256 }),
    index('runs_tools_idx').using('gin', t.tools).with({ gin_pending_list_limit: 256 }),
  ],
);

/** Every event, upcast to the current version, keyed by its stream sequence. */
export const runEvents = pgTable(
  'run_events',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    runId: text('run_id').notNull(),
    type: text('type').notNull(),
    event: jsonb('event').notNull(),
    ts: timestamp('ts', { withTimezone: true, mode: 'string' }).notNull(),
  },
  (t) => [index('run_events_run_seq_idx').on(t.runId, t.seq)],
);

/** How far into each stream the projection has applied; advanced in the same transaction as the rows. */
export const checkpoints = pgTable('projector_checkpoints', {
  name: text('name').primaryKey(),
  lastSeq: bigint('last_seq', { mode: 'number' }).notNull(),
});

/** Stream messages the projection could not apply (corrupt, or impossible for the run's state). Never silent. */
export const projectionErrors = pgTable('projection_errors', {
  seq: bigint('seq', { mode: 'number' }).primaryKey(),
  runId: text('run_id'),
  code: text('code').notNull(),
  message: text('message').notNull(),
  at: timestamp('at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
});

/**
 * Runs submitted through `POST /runs`: the run id and the hash of the request it was submitted with, so the
 * same id again is answered as a duplicate and another body under it as a conflict, beyond the stream's
 * duplicate window. Not a cache of the log (it records what callers asked): never dropped on a rebuild.
 */
export const apiSubmissions = pgTable('api_submissions', {
  runId: text('run_id').primaryKey(),
  /** SHA-256 of the canonical JSON of the request as published (run id and tenant included). */
  bodyHash: text('body_hash').notNull(),
  tenant: text('tenant').notNull(),
  /** The credential's name, for audits. */
  caller: text('caller').notNull(),
  at: timestamp('at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
});

/**
 * The lists of a run's state that grow with the run (`RUN_STATE_LISTS`: its calls, turns and signals), one row
 * per entry; `runs.state` holds the rest of the state. A batch writes the entries it added or changed and
 * leaves the others alone, so a step late in a long run writes what a step early in it writes, where a state
 * written whole grew by every call the run had made. `readStoredStates` and `storedStateText` (stored-state.ts)
 * put them back together.
 */
export const runItems = pgTable(
  'run_items',
  {
    runId: text('run_id').notNull(),
    /** Which list of the state: `calls`, `turns` or `signals`. */
    list: text('list').notNull(),
    /** The entry's index in its list. */
    idx: integer('idx').notNull(),
    item: jsonb('item').notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.list, t.idx] })],
);
