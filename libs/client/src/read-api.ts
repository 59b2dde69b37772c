import type { z } from 'zod';
import {
  ApiErrorSchema,
  type RUN_LIST_SORTS,
  CausesResponseSchema,
  EventPageResponseSchema,
  FlowLimitsResponseSchema,
  type FlowLimitsResponse,
  formatIssues,
  RunListResponseSchema,
  StateAtResponseSchema,
  type RunEvent,
  type RunSummary,
} from '@dura/contracts';
import type { RunState } from '@dura/core';
import { ApiError, ApiUnreachable, ClientNotConfigured, RunNotFound } from './errors';

const MAX_ISSUES_SHOWN = 3;

/** Which runs `listRuns` returns; every field narrows the list (tags: all must match). */
export interface ListRunsFilter {
  status?: RunSummary['status'] | RunSummary['status'][];
  tag?: string | string[];
  /** A tool the run used. */
  tool?: string;
  createdAfter?: string | Date;
  createdBefore?: string | Date;
  sort?: (typeof RUN_LIST_SORTS)[number];
  /** 1..500, default 50. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface RunPage {
  runs: RunSummary[];
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

export type { RunSummary };

export interface EventPage {
  events: RunEvent[];
  /** Pass as `fromSeq` for the next page; absent when this page reached the end of the projected log. */
  nextFromSeq?: number;
}

export interface StateAt {
  runId: string;
  at: number;
  state: RunState;
}

export interface ReadApiOptions {
  apiUrl?: string;
  fetch?: typeof fetch;
  /** Per request, default 10 s. */
  timeoutMs?: number;
  /** Sent as `Authorization: Bearer <token>` when the projector requires credentials. */
  apiToken?: string;
}

/** The projector's HTTP read API, validated on decode. */
export function createReadApi(options: ReadApiOptions) {
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;

  function base(what: string): string {
    if (!options.apiUrl)
      throw new ClientNotConfigured(
        'api_not_configured',
        `${what} reads the projector's HTTP API: pass apiUrl to createDuraClient (e.g. http://127.0.0.1:8080, the projector's PROJECTOR_HTTP_PORT)`,
      );
    return options.apiUrl.replace(/\/+$/, '');
  }

  async function get<S extends z.ZodType>(
    what: string,
    path: string,
    schema: S,
    runId?: string,
  ): Promise<z.infer<S>> {
    const url = `${base(what)}${path}`;
    let response: Response;
    try {
      response = await doFetch(url, {
        signal: AbortSignal.timeout(timeoutMs),
        ...(options.apiToken ? { headers: { authorization: `Bearer ${options.apiToken}` } } : {}),
      });
    } catch (err) {
      throw new ApiUnreachable(url, err);
    }
    const body: unknown = await response.json().catch(() => undefined);
    if (!response.ok) throw apiError(url, response.status, body, runId);
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const issues = formatIssues(parsed.error);
      const more = issues.length > MAX_ISSUES_SHOWN ? `; and ${issues.length - MAX_ISSUES_SHOWN} more` : '';
      throw new ApiError(
        'bad_api_response',
        `${url} answered with a body this client cannot read (${issues.slice(0, MAX_ISSUES_SHOWN).join('; ')}${more}): is the API URL a Dura projector of a matching version?`,
        response.status,
      );
    }
    return parsed.data;
  }

  /** One page of runs matching `filter`, newest update first unless `sort` says otherwise. */
  async function listRuns(filter: ListRunsFilter = {}): Promise<RunPage> {
    const query = new URLSearchParams();
    for (const status of [filter.status ?? []].flat()) query.append('status', status);
    for (const tag of [filter.tag ?? []].flat()) query.append('tag', tag);
    if (filter.tool) query.set('tool', filter.tool);
    if (filter.createdAfter) query.set('createdAfter', iso(filter.createdAfter));
    if (filter.createdBefore) query.set('createdBefore', iso(filter.createdBefore));
    if (filter.sort) query.set('sort', filter.sort);
    if (filter.limit !== undefined) query.set('limit', String(filter.limit));
    if (filter.cursor) query.set('cursor', filter.cursor);
    const qs = query.size > 0 ? `?${query.toString()}` : '';
    const page = await get('listRuns', `/runs${qs}`, RunListResponseSchema);
    return page.nextCursor === undefined ? { runs: page.runs } : page;
  }

  /** The run's state after the event at `seq`: the same fold, over the events with seq <= `seq`. */
  async function stateAt(runId: string, seq: number): Promise<StateAt> {
    const body = await get(
      'stateAt',
      `/runs/${encodeURIComponent(runId)}/state?at=${seq}`,
      StateAtResponseSchema,
      runId,
    );
    return { runId: body.runId, at: body.at, state: body.state };
  }

  /** The event at `seq`, then the event that caused it (`meta.causationId`), and so on back to the run's root. */
  async function causes(runId: string, seq: number): Promise<RunEvent[]> {
    const body = await get(
      'causes',
      `/runs/${encodeURIComponent(runId)}/events/${seq}/causes`,
      CausesResponseSchema,
      runId,
    );
    return body.chain;
  }

  /** A page of the run's events as projected (`fromSeq` inclusive), each decoded against the contract. */
  async function events(
    runId: string,
    options: { fromSeq?: number; limit?: number } = {},
  ): Promise<EventPage> {
    const query = new URLSearchParams();
    if (options.fromSeq !== undefined) query.set('fromSeq', String(options.fromSeq));
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const qs = query.size > 0 ? `?${query.toString()}` : '';
    const page = await get(
      'events',
      `/runs/${encodeURIComponent(runId)}/events${qs}`,
      EventPageResponseSchema,
    );
    return page.nextFromSeq === undefined ? { events: page.events } : page;
  }

  /** Every model limit and concurrency key with its state now (`GET /flow/limits`, docs/flow-control.md). */
  async function flowLimits(): Promise<FlowLimitsResponse> {
    return get('flowLimits', '/flow/limits', FlowLimitsResponseSchema);
  }

  return { listRuns, stateAt, events, causes, flowLimits };
}

function apiError(url: string, status: number, body: unknown, runId: string | undefined): Error {
  const parsed = ApiErrorSchema.safeParse(body);
  const { code, message } = parsed.success
    ? parsed.data.error
    : { code: status === 404 ? 'not_found' : 'api_error', message: `HTTP ${status}` };
  if (status === 404 && message.startsWith('no route for'))
    return new ApiError(
      'api_route_missing',
      `${url}: ${message}; the API there does not serve this path (is it a Dura projector of a matching version?)`,
      status,
      false,
    );
  if (status === 404 && runId !== undefined) return new RunNotFound(runId, `${message} (GET ${url})`);
  return new ApiError(code, `${message} (GET ${url}, HTTP ${status})`, status);
}

function iso(value: string | Date): string {
  return value instanceof Date ? value.toISOString() : value;
}
