import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod';
import {
  EventAcceptedSchema,
  EventTriggerListSchema,
  EventTriggerViewSchema,
  ScheduleListSchema,
  ScheduleViewSchema,
  type EventBody,
} from '@dura/contracts';
import { api } from './http';

/** How often the lists are read again: a schedule's next tick and recent runs move on their own. */
const POLL_MS = 2_000;

export const useSchedules = () =>
  useQuery({
    queryKey: ['schedules'],
    queryFn: ({ signal }) => api(ScheduleListSchema, '/schedules', { signal }),
    refetchInterval: POLL_MS,
  });

export const useTriggers = () =>
  useQuery({
    queryKey: ['triggers'],
    queryFn: ({ signal }) => api(EventTriggerListSchema, '/triggers', { signal }),
    refetchInterval: POLL_MS,
  });

const Created = z.object({ created: z.boolean() });
const ScheduleCreated = ScheduleViewSchema.extend(Created.shape);
const TriggerCreated = EventTriggerViewSchema.extend(Created.shape);
const Deleted = z.object({ id: z.string(), deleted: z.boolean() });
const Triggered = z.object({ runId: z.string() });

/** The lists the page shows, each at its path under the API (`/schedules`, `/triggers`). */
type List = 'schedules' | 'triggers';

/** What the page may do to schedules, triggers and events; each re-reads its list once the API answered. */
export function useScheduleCommands(onDone: (message: string) => void) {
  const client = useQueryClient();
  const fail = (err: Error) => onDone(err.message);
  const path = (list: List, id: string) => `/${list}/${encodeURIComponent(id)}`;
  const after = (list: List, message: string) => {
    onDone(message);
    void client.invalidateQueries({ queryKey: [list] });
  };
  // Creating and deleting go the same way for a schedule and a trigger: `noun` names it in the message.
  const create = (list: List, noun: string, schema: typeof ScheduleCreated | typeof TriggerCreated) => ({
    mutationFn: (body: unknown) => api(schema, `/${list}`, { method: 'POST', body }),
    onSuccess: (c: { spec: { id: string }; created: boolean }) =>
      after(list, `${noun} ${c.spec.id} ${c.created ? 'created' : 'already existed'}.`),
    onError: fail,
  });
  const remove = (list: List, noun: string) => ({
    mutationFn: (id: string) => api(Deleted, path(list, id), { method: 'DELETE' }),
    onSuccess: (d: z.infer<typeof Deleted>) => after(list, `${noun} ${d.id} deleted.`),
    onError: fail,
  });
  return {
    createSchedule: useMutation(create('schedules', 'Schedule', ScheduleCreated)),
    setPaused: useMutation({
      mutationFn: ({ id, paused }: { id: string; paused: boolean }) =>
        api(ScheduleViewSchema, `${path('schedules', id)}/${paused ? 'pause' : 'resume'}`, {
          method: 'POST',
          body: {},
        }),
      onSuccess: (s) => after('schedules', `Schedule ${s.spec.id} ${s.paused ? 'paused' : 'resumed'}.`),
      onError: fail,
    }),
    triggerNow: useMutation({
      mutationFn: (id: string) =>
        api(Triggered, `${path('schedules', id)}/trigger`, { method: 'POST', body: {} }),
      onSuccess: (t) => after('schedules', `Started run ${t.runId}.`),
      onError: fail,
    }),
    deleteSchedule: useMutation(remove('schedules', 'Schedule')),
    createTrigger: useMutation(create('triggers', 'Trigger', TriggerCreated)),
    deleteTrigger: useMutation(remove('triggers', 'Trigger')),
    sendEvent: useMutation({
      mutationFn: (body: EventBody) => api(EventAcceptedSchema, '/events', { method: 'POST', body }),
      onSuccess: (e) =>
        onDone(
          e.duplicate
            ? `Event ${e.id} was already sent (#${e.seq}); nothing new.`
            : `Sent event ${e.id} on ${e.subject}: each trigger reading it starts run trg-<trigger>-${e.id}.`,
        ),
      onError: fail,
    }),
  };
}

export type ScheduleCommands = ReturnType<typeof useScheduleCommands>;
