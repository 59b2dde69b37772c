import { sql } from 'drizzle-orm';
import {
  bigserial,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  type AnyPgColumn,
} from 'drizzle-orm/pg-core';

/** A `timestamp with time zone` column, read as a `Date`. */
const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** An index on `column` of the rows whose `pending` column is still null: the work not done yet. */
const whileNull = (name: string, column: AnyPgColumn, pending: AnyPgColumn) =>
  index(name)
    .on(column)
    .where(sql`${pending} is null`);

/**
 * The effect ledger: one row per idempotency key, ever. `started` rows carry a lease; a `started` row whose
 * lease ran out belongs to a crashed attempt and is reconciled, never silently re-run when the tool is unsafe.
 */
export const effects = pgTable(
  'effects',
  {
    idempotencyKey: text('idempotency_key').primaryKey(),
    runId: text('run_id').notNull(),
    callId: text('call_id').notNull(),
    step: integer('step').notNull(),
    tool: text('tool').notNull(),
    args: jsonb('args').notNull(),
    /** started | retry | succeeded | failed */
    status: text('status').notNull(),
    attempts: integer('attempts').notNull(),
    result: jsonb('result'),
    error: jsonb('error'),
    leaseUntil: timestamptz('lease_until').notNull(),
    startedAt: timestamptz('started_at').notNull(),
    finishedAt: timestamptz('finished_at'),
    durationMs: integer('duration_ms'),
  },
  (t) => [index('effects_run_idx').on(t.runId)],
);

/** Observations waiting to be published to the run's log; written in the same transaction as the effect. */
export const outbox = pgTable(
  'outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: text('run_id').notNull(),
    msgId: text('msg_id').notNull().unique(),
    subject: text('subject').notNull(),
    payload: jsonb('payload').notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    sentAt: timestamptz('sent_at'),
    /**
     * Until when the writer of the row publishes it itself (the fast path); relays leave the row, and the
     * rows of its run behind it, alone until then. Set by the database clock, compared with it.
     */
    claimedUntil: timestamptz('claimed_until'),
  },
  (t) => [whileNull('outbox_unsent_idx', t.id, t.sentAt)],
);

/**
 * Durable timers: one row per (run, wait), written when the timer task arrives and marked fired in the same
 * transaction that queues its `timer_fired` observation. No process holds a timer in memory.
 */
export const timers = pgTable(
  'timers',
  {
    runId: text('run_id').notNull(),
    waitId: text('wait_id').notNull(),
    dueAt: timestamptz('due_at').notNull(),
    causationId: text('causation_id').notNull(),
    correlationId: text('correlation_id').notNull(),
    trace: text('trace'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    firedAt: timestamptz('fired_at'),
  },
  (t) => [primaryKey({ columns: [t.runId, t.waitId] }), whileNull('timers_pending_idx', t.dueAt, t.firedAt)],
);

/**
 * Per-tool concurrency slots shared by every gateway replica: a tool limited to N calls at once has rows
 * 0..N-1; a call runs while it holds one (`holder`), as a lease that a crashed holder's successor may take.
 */
export const toolSlots = pgTable(
  'tool_slots',
  {
    tool: text('tool').notNull(),
    slot: integer('slot').notNull(),
    holder: text('holder'),
    leaseUntil: timestamptz('lease_until'),
  },
  (t) => [primaryKey({ columns: [t.tool, t.slot] })],
);

export type EffectRow = typeof effects.$inferSelect;
export type TimerRow = typeof timers.$inferSelect;
