import * as z from 'zod';
import { JsonValueSchema } from './ids';
import { EventTriggerRecordSchema, EventTriggerSpecSchema, ScheduleRecordSchema } from './schedule';

// The bodies and answers of the projector's `/schedules`, `/triggers` and `/events` routes, shared by the API,
// its OpenAPI document and the web console.

/** A schedule as the API answers it: the stored record and its next ticks (none while paused). */
export const ScheduleViewSchema = ScheduleRecordSchema.extend({ next: z.array(z.string()) });
export type ScheduleView = z.infer<typeof ScheduleViewSchema>;
export const ScheduleListSchema = z.object({ schedules: z.array(ScheduleViewSchema) });

/** Body of `POST /triggers`: an event trigger's spec; `tenant` may be left out (the caller's). */
export const EventTriggerBodySchema = EventTriggerSpecSchema.extend({
  tenant: EventTriggerSpecSchema.shape.tenant.optional(),
});
/** An event trigger as the API answers it: the stored record. */
export const EventTriggerViewSchema = EventTriggerRecordSchema;
export const EventTriggerListSchema = z.object({ triggers: z.array(EventTriggerViewSchema) });

/** A message id an event may carry: it becomes part of the run ids its triggers start (`trg-<trigger>-<id>`). */
export const EventIdSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9_-]{1,60}$/,
    'an event id is 1 to 60 letters, digits, "_" or "-" (it becomes part of run ids)',
  );

/** One subject under `dura.event.` (no wildcards): where an event is published. */
export const EventSubjectSchema = z
  .string()
  .max(200)
  .regex(
    /^dura\.event(\.[A-Za-z0-9_-]+)+$/,
    'the subject must be under "dura.event.", tokens of letters, digits, "_" and "-" without wildcards, e.g. "dura.event.orders.created"',
  );

/** Body of `POST /events`: the subject, the payload (the input of the runs it starts) and an optional id. */
export const EventBodySchema = z
  .object({
    subject: EventSubjectSchema,
    payload: JsonValueSchema,
    /** Idempotency key: the same id again within the stream's duplicate window is dropped (default: a fresh id). */
    id: EventIdSchema.optional(),
  })
  .strict();
export type EventBody = z.infer<typeof EventBodySchema>;

/** Answer of `POST /events`: where and under which message id it was published. */
export const EventAcceptedSchema = z.object({
  subject: z.string(),
  id: z.string(),
  /** Its sequence in DURA_EVENTS (for a duplicate: the first one's). */
  seq: z.number().int().positive(),
  /** True when this id was published before within the duplicate window: nothing new is stored. */
  duplicate: z.boolean(),
});
export type EventAccepted = z.infer<typeof EventAcceptedSchema>;
