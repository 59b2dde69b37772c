import { bigint, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** One row per run: the fold of its log (a cache: drop it and replay the stream to rebuild it). */
export const runs = pgTable(
  'runs',
  {
    runId: text('run_id').primaryKey(),
    status: text('status').notNull(),
    state: jsonb('state').notNull(),
    lastSeq: bigint('last_seq', { mode: 'number' }).notNull(),
    eventCount: integer('event_count').notNull(),
    steps: integer('steps').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'string' }),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'string' }),
  },
  (t) => [index('runs_status_updated_idx').on(t.status, t.updatedAt)],
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
