import * as z from 'zod';
import { DebounceSchema, DedupeSchema } from './run-gate';
import { RunRequestSchema, TenantSchema } from './run-request';

/** A schedule or trigger id: it becomes part of run ids, so the same alphabet, and short. */
export const TriggerIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_]+$/, 'an id may contain only letters, digits and "_" (it becomes part of run ids)');

/** What a schedule or trigger starts: a run request without the fields the trigger decides. */
export const RunTemplateSchema = RunRequestSchema.omit({ runId: true, tenant: true, parent: true });
export type RunTemplate = z.infer<typeof RunTemplateSchema>;

/** A tick whose previous run is still going: skip it, keep one waiting, start it anyway, or cancel the old. */
export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'allow_all', 'cancel_previous'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** Ticks missed while no replica ran (older than `graceMs`): none, the most recent, or all within `windowMs`. */
export const CATCH_UP_POLICIES = ['skip', 'last', 'all'] as const;
export type CatchUpPolicy = (typeof CATCH_UP_POLICIES)[number];

export const DEFAULT_GRACE_MS = 5_000;
export const DEFAULT_CATCH_UP_WINDOW_MS = 3_600_000;

export const CatchUpSchema = z
  .object({
    policy: z.enum(CATCH_UP_POLICIES).default('skip'),
    /** `all`: only missed ticks this recent run (default one hour). */
    windowMs: z
      .number()
      .int()
      .positive()
      .max(31 * 86_400_000)
      .default(DEFAULT_CATCH_UP_WINDOW_MS),
    /** A tick handled this long after its time still counts as on time (default 5 s). */
    graceMs: z.number().int().min(1000).max(86_400_000).default(DEFAULT_GRACE_MS),
  })
  .strict();
export type CatchUp = z.infer<typeof CatchUpSchema>;

/**
 * A recurring run: a cron expression in an IANA time zone, or a fixed interval (ticks at whole multiples of
 * `everyMs` since the Unix epoch). Cron and time zone are checked by `checkSchedule` (@dura/core).
 */
export const ScheduleSpecSchema = z
  .object({
    id: TriggerIdSchema,
    tenant: TenantSchema,
    cron: z.string().min(1).max(200).optional(),
    timeZone: z.string().min(1).max(64).optional(),
    everyMs: z
      .number()
      .int()
      .min(1000)
      .max(366 * 86_400_000)
      .optional(),
    request: RunTemplateSchema,
    overlap: z.enum(OVERLAP_POLICIES).default('skip'),
    catchUp: CatchUpSchema.default({
      policy: 'skip',
      windowMs: DEFAULT_CATCH_UP_WINDOW_MS,
      graceMs: DEFAULT_GRACE_MS,
    }),
  })
  .strict()
  .refine((s) => (s.cron === undefined) !== (s.everyMs === undefined), {
    message: 'give exactly one of "cron" (with an optional "timeZone") and "everyMs"',
  })
  .refine((s) => s.timeZone === undefined || s.cron !== undefined, {
    message: '"timeZone" applies to "cron" only; an interval is the same in every zone',
  });
export type ScheduleSpec = z.infer<typeof ScheduleSpecSchema>;
export type ScheduleSpecInput = z.input<typeof ScheduleSpecSchema>;

/**
 * `started`, `triggered` (by hand), `cancelled_previous` (started after cancelling the last run): a run;
 * `skipped` (overlap), `buffered` (waits for the last run), `missed` (`count` ticks passed while no replica ran).
 */
export const SCHEDULE_ACTIONS = [
  'started',
  'triggered',
  'cancelled_previous',
  'skipped',
  'buffered',
  'missed',
] as const;

/** One handled tick, newest last in `ScheduleRecord.history` (at most `MAX_SCHEDULE_HISTORY`). */
export const ScheduleTickSchema = z.object({
  tick: z.number().int(),
  runId: z.string(),
  action: z.enum(SCHEDULE_ACTIONS),
  count: z.number().int().positive().optional(),
});
export type ScheduleTick = z.infer<typeof ScheduleTickSchema>;
export const MAX_SCHEDULE_HISTORY = 100;

/** The stored schedule (KV bucket `dura_schedules`, key = id): its spec and where its ticks stand. */
export const ScheduleRecordSchema = z.object({
  spec: ScheduleSpecSchema,
  paused: z.boolean(),
  createdAt: z.number().int(),
  /** Every tick at or before this instant (ms) is handled. */
  cursor: z.number().int(),
  /** The run of the last started tick: the overlap policy asks whether it still runs. */
  lastRunId: z.string().optional(),
  /** `buffer_one`: the tick waiting for the previous run to end. */
  buffered: z.number().int().optional(),
  history: z.array(ScheduleTickSchema),
  /**
   * Decided but perhaps not yet published: runs to submit and runs to cancel. Written before anything is
   * published, so a replica killed in between leaves them for the next one (publishing again is a no-op).
   */
  pending: z
    .object({
      start: z.array(z.object({ tick: z.number().int(), runId: z.string() })),
      cancel: z.array(z.string()),
      /**
       * The scheduler replica that publishes them (the one whose compare-and-set wrote or took them). Others
       * leave them alone until they stay unchanged for a while (the holder died); absent: the first takes them.
       */
      claimedBy: z.string().optional(),
    })
    .default({ start: [], cancel: [] }),
});
export type ScheduleRecord = z.infer<typeof ScheduleRecordSchema>;

/** The run id of a schedule's tick: the same on every replica, so a tick starts at most one run. */
export function scheduleRunId(scheduleId: string, tick: number): string {
  return `sch-${scheduleId}-${Math.floor(tick / 1000)}`;
}

/** An event trigger (KV bucket `dura_triggers`): each message on `subject` starts a run with it as input. */
export const EventTriggerSpecSchema = z
  .object({
    id: TriggerIdSchema,
    tenant: TenantSchema,
    /** Under `dura.event.>` (stream DURA_EVENTS); wildcards allowed. */
    subject: z
      .string()
      .max(200)
      .regex(
        /^dura\.event(\.[A-Za-z0-9_*>-]+)+$/,
        'the subject must be under "dura.event.", e.g. "dura.event.orders.created"',
      ),
    request: RunTemplateSchema.omit({ input: true }),
    /**
     * Debounce by a key over the event (`"$input.customer"`, `"order-{$input.id}"`, `{$subject}`): the run
     * starts `windowMs` after the key's last event, with that event as input; earlier ones are dropped.
     */
    debounce: DebounceSchema.optional(),
    /** `skip-if-running`: an event whose key has a run in flight starts nothing (recorded and logged). */
    dedupe: DedupeSchema.optional(),
  })
  .strict();
export type EventTriggerSpec = z.infer<typeof EventTriggerSpecSchema>;

/** The stored trigger: messages published from `createdAt` on start runs (earlier ones are history). */
export const EventTriggerRecordSchema = z.object({
  spec: EventTriggerSpecSchema,
  createdAt: z.number().int(),
});
export type EventTriggerRecord = z.infer<typeof EventTriggerRecordSchema>;

/** The run id of a trigger's message: from its `Nats-Msg-Id` (else its stream sequence), so redelivery is one run. */
export function triggerRunId(triggerId: string, messageKey: string): string {
  const key = /^[A-Za-z0-9_-]{1,60}$/.test(messageKey) ? messageKey : hashKey(messageKey);
  return `trg-${triggerId}-${key}`;
}

/** FNV-1a, twice with different seeds: a stable 16-hex token for a message id outside the run-id alphabet. */
function hashKey(text: string): string {
  const fnv = (seed: number) => {
    let h = seed >>> 0;
    for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
    return h.toString(16).padStart(8, '0');
  };
  return `h${fnv(2166136261)}${fnv(0x9747b28c)}`;
}
