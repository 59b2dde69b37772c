import * as z from 'zod';
import { RunRequestSchema } from './run-request';

// Debounce and skip-if-running: what an event trigger or `POST /runs` may ask before a run starts, and the
// shared record (KV bucket `dura_run_gates`, one entry per key) that every planner and projector decides on.

/** The longest debounce window: a window is one KV entry, and the bucket forgets entries idle for a day. */
export const MAX_DEBOUNCE_WINDOW_MS = 3_600_000;
export const MIN_DEBOUNCE_WINDOW_MS = 50;

/** A gate's key: events or requests with equal keys share one window and one "is a run in flight" check. */
export const GateKeySchema = z
  .string()
  .min(1, 'a key must not be empty')
  .max(200, 'a key has at most 200 characters');

/** The run starts `windowMs` after the last event or request of its key; earlier ones in the window are dropped. */
export const DebounceSchema = z
  .object({
    key: GateKeySchema,
    windowMs: z
      .number()
      .int('windowMs is a whole number of milliseconds')
      .min(MIN_DEBOUNCE_WINDOW_MS, `windowMs is at least ${MIN_DEBOUNCE_WINDOW_MS}`)
      .max(MAX_DEBOUNCE_WINDOW_MS, `windowMs is at most ${MAX_DEBOUNCE_WINDOW_MS} (one hour)`),
  })
  .strict();
export type Debounce = z.infer<typeof DebounceSchema>;

/** `skip-if-running`: while a run of the key is in flight (started and not finished), nothing new starts. */
export const DedupeSchema = z
  .object({
    key: GateKeySchema,
    policy: z.literal('skip-if-running', { error: 'the only dedupe policy is "skip-if-running"' }),
  })
  .strict();
export type Dedupe = z.infer<typeof DedupeSchema>;

/** The gate fields of a trigger or a `POST /runs` body; both set must name the same key (one entry per key). */
export const GateFieldsSchema = z.object({
  debounce: DebounceSchema.optional(),
  dedupe: DedupeSchema.optional(),
});
export type GateFields = z.infer<typeof GateFieldsSchema>;

/** The issue with a gate's fields (both set with different keys), for a refinement's message. */
export function gateKeyIssue(fields: GateFields): string | undefined {
  const { debounce, dedupe } = fields;
  if (debounce && dedupe && debounce.key !== dedupe.key)
    return `debounce.key ("${debounce.key}") and dedupe.key ("${dedupe.key}") differ: a gate has one key, set both to the same`;
  return undefined;
}

/** A debounce window still open: the request it will start (the last one's) and when. */
export const GateWindowSchema = z.object({
  /** The run id it starts, fixed when the window opens: what `POST /runs` answers while it is pending. */
  runId: z.string(),
  request: RunRequestSchema,
  windowMs: z.number().int(),
  skipIfRunning: z.boolean(),
  openedAt: z.number().int(),
  fireAt: z.number().int(),
  /** Which event or request its request came from (a message id, a stream sequence, a request id). */
  source: z.string(),
  /** Events or requests taken into the window, the last one included. */
  events: z.number().int(),
  /** The most recent sources it dropped (replaced by a later one), at most 20. */
  dropped: z.array(z.string()),
  /** The trigger revision it belongs to: a window of a trigger deleted meanwhile starts nothing. */
  triggerRevision: z.number().int().optional(),
});
export type GateWindow = z.infer<typeof GateWindowSchema>;

/** A window closed and decided, not yet carried out: publishing it again is harmless (its run id is fixed). */
export const GateFiringSchema = z.object({
  runId: z.string(),
  request: RunRequestSchema,
  outcome: z.enum(['start', 'skip']),
  /** For `skip`: the run of the key that was in flight. */
  runningRunId: z.string().optional(),
  events: z.number().int(),
  /** The window's dropped sources (an overtaken event's redelivery is not counted twice). */
  dropped: z.array(z.string()).optional(),
  claimedBy: z.string(),
});
export type GateFiring = z.infer<typeof GateFiringSchema>;

/** One key's gate record: its last run, its open window, and what it counted. */
export const GateRecordSchema = z.object({
  /** `trigger:<id>` or `runs:<tenant>`: a trigger's keys and a tenant's API keys never share an entry. */
  scope: z.string(),
  key: z.string(),
  /** The last run started through the gate: the one skip-if-running asks about. */
  run: z.object({ runId: z.string(), at: z.number().int() }).optional(),
  /** Highest event sequence taken (triggers): a redelivered earlier event is not taken twice. */
  lastSeq: z.number().int().optional(),
  /** Windows opened so far: numbers the next one (its run id). */
  windows: z.number().int(),
  window: GateWindowSchema.optional(),
  firing: GateFiringSchema.optional(),
  counts: z.object({ started: z.number().int(), debounced: z.number().int(), skipped: z.number().int() }),
  updatedAt: z.number().int(),
});
export type GateRecord = z.infer<typeof GateRecordSchema>;

/** What a gate did with one event or request. */
export type GateOutcome =
  | { kind: 'started'; runId: string }
  | {
      kind: 'debounced';
      /** The run the window will start (unless a later event extends it or skip-if-running skips it). */
      runId: string;
      fireAt: number;
      /** The source this one replaced in the window, if it was not the first. */
      replaced: string | undefined;
      events: number;
    }
  | { kind: 'skipped'; runningRunId: string }
  | {
      kind: 'stale';
      lastSeq: number;
      /** A debounced event: the window (or firing) it was counted into as dropped, and its events now. */
      counted?: { runId: string; events: number };
    };

/**
 * The run id of a debounced trigger's window: `trg-<trigger>-w<key token>-<opened>`, `opened` the window's
 * opening time in base 36 (a key's windows open one after another, so each has its own run).
 */
export function triggerWindowRunId(triggerId: string, keyToken: string, opened: string): string {
  return `trg-${triggerId}-w${keyToken}-${opened}`;
}
