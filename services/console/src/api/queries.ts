import { useEffect, useState } from 'react';
import { useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  CausesResponseSchema,
  ConsoleSessionSchema,
  RunListResponseSchema,
  StateAtResponseSchema,
  parseTokenFeedEvent,
  type RunEvent,
} from '@dura/contracts';
import { createTokenText } from '@dura/core';
import type { z } from 'zod';
import { api, ApiError } from './http';
import { readRunEvents, readRunState, readRunSummary } from './run-reader';
import { followSse } from './sse';
import { answeringText } from '../model/conversation';
import { listQueryString, type RunFilters } from '../model/filters';

export const useSession = () =>
  useQuery({
    queryKey: ['session'],
    queryFn: () => api(ConsoleSessionSchema, '/console/session'),
    retry: false,
  });

/** Runs matching `filters`, newest activity first, one keyset page at a time; the first pages poll for news. */
export function useRuns(filters: RunFilters) {
  return useInfiniteQuery({
    queryKey: ['runs', filters],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam, signal }) =>
      api(RunListResponseSchema, `/runs?${listQueryString(filters, pageParam)}`, { signal }),
    getNextPageParam: (page) => page.nextCursor,
    // New runs appear without a reload while the user looks at the top of the list (a few pages re-read).
    refetchInterval: (query) => ((query.state.data?.pages.length ?? 0) <= 2 ? 1500 : false),
  });
}

const notFound = (error: unknown) => error instanceof ApiError && error.status === 404;

/**
 * The run's folded state from the projection: first without its calls (`summary`: all the first screen needs,
 * a small part of a long run's state), then in full (`full`) once the page has drawn the first one, as the rest
 * of the run's events are read; `data` is the newest of the two. The live stream reads the log itself, so it
 * can show an event before the projection has applied it: while the state is behind the newest event seen (or
 * the run is not projected yet, just submitted or forked), it is asked for again.
 */
export function useRunState(runId: string) {
  const client = useQueryClient();
  const summary = useQuery({
    queryKey: ['run-summary', runId],
    queryFn: ({ signal }) => readRunSummary(runId, signal),
    staleTime: Infinity,
    retry: (count, error) => !notFound(error) && count < 1,
    refetchInterval: (query) => (notFound(query.state.error) ? 1000 : false),
  });
  // An effect runs once its render is on the screen: the first screen has been drawn with the summary.
  const [drawn, setDrawn] = useState<string>();
  const summarized = summary.data !== undefined;
  useEffect(() => {
    if (summarized) setDrawn(runId);
  }, [summarized, runId]);
  const full = useQuery({
    queryKey: ['run', runId],
    enabled: drawn === runId,
    queryFn: ({ signal }) => readRunState(runId, signal),
    retry: (count, error) => !notFound(error) && count < 1,
    refetchInterval: (query) => {
      const newest = client.getQueryData<RunEvent[]>(['events', runId])?.at(-1)?.seq ?? 0;
      return (query.state.data?.lastSeq ?? 0) < newest ? 300 : false;
    },
  });
  return {
    data: full.data ?? summary.data,
    full: full.data,
    error: full.error ?? summary.error,
    isPending: summary.isPending && full.isPending,
  };
}

/**
 * What the run's log says as of event `seq`, read once `seq` is chosen: `path` is under `/runs/:id`. The log
 * never changes below an event, so the answer never goes stale.
 */
function useAsOfEvent<S extends z.ZodType>(
  kind: string,
  schema: S,
  runId: string,
  seq: number | undefined,
  path: (seq: number) => string,
) {
  return useQuery({
    queryKey: [kind, runId, seq],
    enabled: seq !== undefined,
    staleTime: Infinity,
    queryFn: ({ signal }) => api(schema, `/runs/${encodeURIComponent(runId)}${path(seq ?? 1)}`, { signal }),
  });
}

export const useStateAt = (runId: string, at: number | undefined) =>
  useAsOfEvent('state-at', StateAtResponseSchema, runId, at, (event) => `/state?at=${event}`);

export const useCauses = (runId: string, seq: number | undefined) =>
  useAsOfEvent('causes', CausesResponseSchema, runId, seq, (event) => `/events/${event}/causes`);

/** The run's events as the page has them: all of them (`complete`), or while they are read, the first ones. */
export interface RunEvents {
  events: RunEvent[];
  complete: boolean;
  error: Error | null;
}

const NO_EVENTS: RunEvent[] = [];

/**
 * Every event of the run, read page by page (off the page's thread: `readRunEvents`), then kept current from
 * the live stream. The first page is given as soon as it is in, and the rest is read once the page has drawn
 * it (and `hold` is over): the first screen does not share the machine with reading the rest. The rest comes
 * in one piece (one more render, not one per page).
 */
export function useRunEvents(runId: string, hold = false): RunEvents {
  const client = useQueryClient();
  const [first, setFirst] = useState<{ runId: string; events: RunEvent[]; readRest: () => void }>();
  const query = useQuery({
    queryKey: ['events', runId],
    staleTime: Infinity,
    queryFn: ({ signal }) =>
      readRunEvents(runId, signal, (events, readRest) => setFirst({ runId, events, readRest })),
  });
  // An effect runs once its render is on the screen: the first screen has been drawn.
  useEffect(() => {
    if (!hold) first?.readRest();
  }, [first, hold]);
  const loaded = query.isSuccess;
  useEffect(() => {
    if (!loaded) return;
    const abort = new AbortController();
    const last = client.getQueryData<RunEvent[]>(['events', runId])?.at(-1)?.seq ?? 0;
    let refresh: ReturnType<typeof setTimeout> | undefined;
    void followSse(
      `/runs/${encodeURIComponent(runId)}/stream`,
      (message) => {
        if (message.event === 'end' || message.id === undefined) return;
        const event = JSON.parse(message.data) as RunEvent;
        client.setQueryData<RunEvent[]>(['events', runId], (events = []) =>
          events.length > 0 && (events.at(-1)?.seq ?? 0) >= event.seq ? events : [...events, event],
        );
        // The folded state follows the events: re-read it once a burst of events has passed.
        clearTimeout(refresh);
        refresh = setTimeout(() => void client.invalidateQueries({ queryKey: ['run', runId] }), 150);
      },
      abort.signal,
      String(last),
    );
    return () => {
      abort.abort();
      clearTimeout(refresh);
    };
  }, [client, runId, loaded]);
  const events = query.data ?? (first?.runId === runId ? first.events : NO_EVENTS);
  return { events, complete: loaded, error: query.error };
}

/**
 * The text a model is answering right now, as the token stream gives it: resumed after a drop from the last id
 * (no gap, no repeat), an attempt's text dropped when the model is asked again, gone once its thought is in the
 * log (the stream then says the answer is recorded). Only this string is state. Followed only while `live` (the
 * run may still ask a model, or is not known yet): a finished run's stream replays every recorded answer, frames
 * that change nothing on the page and were, for a long run, much of the work of opening it.
 */
export function useLiveText(runId: string, live: boolean): string | undefined {
  const [answering, setAnswering] = useState<string | undefined>();
  useEffect(() => {
    setAnswering(undefined);
    if (!live) return;
    const abort = new AbortController();
    const text = createTokenText();
    // A burst of frames (a finished run's replayed answers) is read once per animation frame, not per frame.
    let pending: number | undefined;
    void followSse(
      `/runs/${encodeURIComponent(runId)}/tokens`,
      (message) => {
        const event = parseTokenFeedEvent(message.event, message.data);
        if (!event) return;
        text.apply(event);
        pending ??= requestAnimationFrame(() => {
          pending = undefined;
          setAnswering(answeringText(text.answers()));
        });
      },
      abort.signal,
    );
    return () => {
      abort.abort();
      if (pending !== undefined) cancelAnimationFrame(pending);
    };
  }, [runId, live]);
  return answering;
}
