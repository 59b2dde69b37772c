import * as z from 'zod';
import {
  ApiErrorSchema,
  EventPageResponseSchema,
  RunListResponseSchema,
  RunStateSchema,
  type JsonValue,
} from '@dura/contracts';

/** A refusal or failure of the projector's API, with its HTTP status and the API's own message. */
export class DuraApiError extends Error {
  override readonly name = 'DuraApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const SubmitAcceptedSchema = z.object({ runId: z.string(), duplicate: z.boolean() });
const SignalAcceptedSchema = z.object({ runId: z.string(), signalId: z.string(), duplicate: z.boolean() });

export type RunState = z.infer<typeof RunStateSchema>;

/**
 * The projector's HTTP API as one caller (its bearer token) sees it: the API checks the token's scopes and
 * tenant on every request, so the MCP server holds no authority of its own.
 */
export function createDuraApi(options: { apiUrl: string; token?: string | undefined; fetch?: typeof fetch }) {
  const doFetch = options.fetch ?? globalThis.fetch;
  const base = options.apiUrl.replace(/\/+$/, '');

  async function call<S extends z.ZodType>(
    method: 'GET' | 'POST',
    path: string,
    schema: S,
    body?: unknown,
  ): Promise<z.infer<S>> {
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await doFetch(`${base}${path}`, {
        method,
        headers,
        signal: AbortSignal.timeout(15_000),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new DuraApiError(
        0,
        'api_unreachable',
        `the Dura API at ${base} cannot be reached (${(err as Error).message}); check --api / DURA_API_URL`,
      );
    }
    const json: unknown = await response.json().catch(() => undefined);
    if (!response.ok) {
      const error = ApiErrorSchema.safeParse(json);
      throw new DuraApiError(
        response.status,
        error.success ? error.data.error.code : 'api_error',
        error.success ? error.data.error.message : `${method} ${path} answered ${response.status}`,
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw new DuraApiError(
        response.status,
        'bad_api_response',
        `${method} ${path} answered a body this server cannot read`,
      );
    return parsed.data;
  }

  const run = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

  /**
   * `GET /runs/{id}/stream` from `fromSeq`: the run's events as Server-Sent Events, as long as `signal` lets it
   * run. The API checks the token's scope and tenant before the stream starts; a refusal throws.
   */
  async function stream(
    runId: string,
    fromSeq: number,
    signal: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>> {
    const path = `${run(runId)}/stream?fromSeq=${fromSeq}`;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let response: Response;
    try {
      response = await doFetch(`${base}${path}`, { headers, signal });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new DuraApiError(
        0,
        'api_unreachable',
        `the Dura API at ${base} cannot be reached (${(err as Error).message}); check --api / DURA_API_URL`,
      );
    }
    if (!response.ok || !response.body) {
      const error = ApiErrorSchema.safeParse(await response.json().catch(() => undefined));
      throw new DuraApiError(
        response.status,
        error.success ? error.data.error.code : 'api_error',
        error.success ? error.data.error.message : `GET ${path} answered ${response.status}`,
      );
    }
    return response.body;
  }

  return {
    stream,
    submit: (request: Record<string, JsonValue>) => call('POST', '/runs', SubmitAcceptedSchema, request),
    getRun: (runId: string) => call('GET', run(runId), RunStateSchema),
    listRuns: (query: URLSearchParams) => call('GET', `/runs?${query.toString()}`, RunListResponseSchema),
    events: (runId: string, fromSeq: number, limit: number) =>
      call('GET', `${run(runId)}/events?fromSeq=${fromSeq}&limit=${limit}`, EventPageResponseSchema),
    signal: (runId: string, name: string, payload: JsonValue | undefined) =>
      call(
        'POST',
        `${run(runId)}/signals`,
        SignalAcceptedSchema,
        payload === undefined ? { name } : { name, payload },
      ),
    cancel: (runId: string, reason: string | undefined) =>
      call('POST', `${run(runId)}/cancel`, SignalAcceptedSchema, reason === undefined ? {} : { reason }),
  };
}

export type DuraApi = ReturnType<typeof createDuraApi>;
