import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

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
    leaseUntil: timestamp('lease_until', { withTimezone: true, mode: 'date' }).notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
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
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    sentAt: timestamp('sent_at', { withTimezone: true, mode: 'date' }),
    /**
     * Until when the writer of the row publishes it itself (the fast path); relays leave the row, and the
     * rows of its run behind it, alone until then. Set by the database clock, compared with it.
     */
    claimedUntil: timestamp('claimed_until', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('outbox_unsent_idx')
      .on(t.id)
      .where(sql`${t.sentAt} is null`),
  ],
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
    dueAt: timestamp('due_at', { withTimezone: true, mode: 'date' }).notNull(),
    causationId: text('causation_id').notNull(),
    correlationId: text('correlation_id').notNull(),
    trace: text('trace'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    firedAt: timestamp('fired_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    primaryKey({ columns: [t.runId, t.waitId] }),
    index('timers_pending_idx')
      .on(t.dueAt)
      .where(sql`${t.firedAt} is null`),
  ],
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
    leaseUntil: timestamp('lease_until', { withTimezone: true, mode: 'date' }),
  },
  (t) => [primaryKey({ columns: [t.tool, t.slot] })],
);

export type EffectRow = typeof effects.$inferSelect;
export type TimerRow = typeof timers.$inferSelect;
