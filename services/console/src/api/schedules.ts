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
const Deleted = z.object({ id: z.string(), deleted: z.boolean() });
const Triggered = z.object({ runId: z.string() });

/** What the page may do to schedules, triggers and events; each re-reads its list once the API answered. */
export function useScheduleCommands(onDone: (message: string) => void) {
  const client = useQueryClient();
  const fail = (err: Error) => onDone(err.message);
  const path = (id: string) => `/schedules/${encodeURIComponent(id)}`;
  const after = (list: 'schedules' | 'triggers', message: string) => {
    onDone(message);
    void client.invalidateQueries({ queryKey: [list] });
  };
  return {
    createSchedule: useMutation({
      mutationFn: (body: unknown) =>
        api(ScheduleViewSchema.extend(Created.shape), '/schedules', { method: 'POST', body }),
      onSuccess: (s) =>
        after('schedules', `Schedule ${s.spec.id} ${s.created ? 'created' : 'already existed'}.`),
      onError: fail,
    }),
    setPaused: useMutation({
      mutationFn: ({ id, paused }: { id: string; paused: boolean }) =>
        api(ScheduleViewSchema, `${path(id)}/${paused ? 'pause' : 'resume'}`, { method: 'POST', body: {} }),
      onSuccess: (s) => after('schedules', `Schedule ${s.spec.id} ${s.paused ? 'paused' : 'resumed'}.`),
      onError: fail,
    }),
    triggerNow: useMutation({
      mutationFn: (id: string) => api(Triggered, `${path(id)}/trigger`, { method: 'POST', body: {} }),
      onSuccess: (t) => after('schedules', `Started run ${t.runId}.`),
      onError: fail,
    }),
    deleteSchedule: useMutation({
      mutationFn: (id: string) => api(Deleted, path(id), { method: 'DELETE' }),
      onSuccess: (d) => after('schedules', `Schedule ${d.id} deleted.`),
      onError: fail,
    }),
    createTrigger: useMutation({
      mutationFn: (body: unknown) =>
        api(EventTriggerViewSchema.extend(Created.shape), '/triggers', { method: 'POST', body }),
      onSuccess: (t) =>
        after('triggers', `Trigger ${t.spec.id} ${t.created ? 'created' : 'already existed'}.`),
      onError: fail,
    }),
    deleteTrigger: useMutation({
      mutationFn: (id: string) => api(Deleted, `/triggers/${encodeURIComponent(id)}`, { method: 'DELETE' }),
      onSuccess: (d) => after('triggers', `Trigger ${d.id} deleted.`),
      onError: fail,
    }),
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
