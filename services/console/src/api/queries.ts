import { useEffect } from 'react';
import { useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  CausesResponseSchema,
  ConsoleSessionSchema,
  EventPageResponseSchema,
  RunListResponseSchema,
  RunStateSchema,
  StateAtResponseSchema,
  TokenDeltaSchema,
  type EventPageResponse,
  type RunEvent,
} from '@dura/contracts';
import { api } from './http';
import { followSse } from './sse';
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

export const useRunState = (runId: string) =>
  useQuery({
    queryKey: ['run', runId],
    queryFn: ({ signal }) => api(RunStateSchema, `/runs/${encodeURIComponent(runId)}`, { signal }),
  });

export const useStateAt = (runId: string, at: number | undefined) =>
  useQuery({
    queryKey: ['state-at', runId, at],
    enabled: at !== undefined,
    staleTime: Infinity,
    queryFn: ({ signal }) =>
      api(StateAtResponseSchema, `/runs/${encodeURIComponent(runId)}/state?at=${at ?? 1}`, { signal }),
  });

export const useCauses = (runId: string, seq: number | undefined) =>
  useQuery({
    queryKey: ['causes', runId, seq],
    enabled: seq !== undefined,
    staleTime: Infinity,
    queryFn: ({ signal }) =>
      api(CausesResponseSchema, `/runs/${encodeURIComponent(runId)}/events/${seq ?? 1}/causes`, { signal }),
  });

/** Every event of the run, read page by page, then kept current from the live stream. */
export function useRunEvents(runId: string) {
  const client = useQueryClient();
  const query = useQuery({
    queryKey: ['events', runId],
    staleTime: Infinity,
    queryFn: async ({ signal }) => {
      const events: RunEvent[] = [];
      let from: number | undefined = 0;
      while (from !== undefined) {
        const page: EventPageResponse = await api(
          EventPageResponseSchema,
          `/runs/${encodeURIComponent(runId)}/events?fromSeq=${from}&limit=1000`,
          { signal },
        );
        events.push(...page.events);
        from = page.nextFromSeq;
      }
      return events;
    },
  });
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
  return query;
}

/** The model's answer as it streams, per decision; cleared when its `thought` is recorded. */
export function useLiveTokens(runId: string, onDelta: (decision: number, delta: string) => void) {
  useEffect(() => {
    const abort = new AbortController();
    void followSse(
      `/runs/${encodeURIComponent(runId)}/tokens`,
      (message) => {
        if (message.event !== 'token') return;
        const parsed = TokenDeltaSchema.safeParse(JSON.parse(message.data));
        if (parsed.success) onDelta(parsed.data.decision, parsed.data.delta);
      },
      abort.signal,
    );
    return () => abort.abort();
  }, [runId, onDelta]);
}
