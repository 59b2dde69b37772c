import { ApiErrorSchema } from '@dura/contracts';
import type { z } from 'zod';
import { authHeaders } from './token';
import { takeAhead, type FetchedAnswer } from './fetch-ahead';

/** An API answer other than 2xx, with the API's own code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type ApiInit = {
  method?: 'GET' | 'POST' | 'DELETE';
  body?: unknown;
  signal?: AbortSignal;
  /** The credentials to present, where the tab's token store is out of reach (a worker). */
  auth?: Record<string, string>;
};

/** Calls the API on this origin and validates the answer with `schema` (zod from @dura/contracts). */
export async function api<S extends z.ZodType>(
  schema: S,
  path: string,
  init: ApiInit = {},
): Promise<z.infer<S>> {
  // A GET that the page's first script fetched ahead (the session) is read from what it fetched, once.
  const fetched = init.method === undefined && init.body === undefined ? await takeAhead(path) : undefined;
  return validated(schema, path, fetched ? fetchedAnswer(fetched) : await apiAnswer(path, init));
}

/** A 2xx answer of the API: its status and JSON, not yet validated. */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** Calls the API; a 2xx answer is returned as it came, any other throws its ApiError. */
export async function apiAnswer(path: string, init: ApiInit = {}): Promise<ApiAnswer> {
  const response = await fetch(path, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.auth ?? authHeaders()),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const body: unknown = await response.json().catch(() => undefined);
  return answerOf(path, response.status, body);
}

/** The API's answer to `path`: a 2xx as it came, any other throws its ApiError. */
export function answerOf(path: string, status: number, body: unknown): ApiAnswer {
  if (status < 200 || status > 299) {
    const parsed = ApiErrorSchema.safeParse(body);
    throw parsed.success
      ? new ApiError(status, parsed.data.error.code, parsed.data.error.message)
      : new ApiError(status, 'http_error', `${path} answered ${status}`);
  }
  return { status, body };
}

/** A fetched-ahead answer as the API's answer (its body parsed here), as `apiAnswer` gives it. */
export function fetchedAnswer(fetched: FetchedAnswer): ApiAnswer {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(fetched.body));
  } catch {
    body = undefined;
  }
  return answerOf(fetched.path, fetched.status, body);
}

/** `answer`, the API's answer to `path`, checked against `schema`. */
export function validated<S extends z.ZodType>(schema: S, path: string, answer: ApiAnswer): z.infer<S> {
  const parsed = schema.safeParse(answer.body);
  if (!parsed.success)
    throw new ApiError(answer.status, 'bad_answer', `${path} answered a shape the console does not know`);
  return parsed.data;
}
