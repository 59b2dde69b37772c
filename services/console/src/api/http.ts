import { ApiErrorSchema } from '@dura/contracts';
import type { z } from 'zod';

const TOKEN_KEY = 'dura.console.token';

/** The bearer token the console presents, kept for this browser tab only. */
export const tokenStore = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

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

/** Headers of every call: the token, when there is one. */
export function authHeaders(): Record<string, string> {
  const token = tokenStore.get();
  return token ? { authorization: `Bearer ${token}` } : {};
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
  return validated(schema, path, await apiAnswer(path, init));
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
  if (!response.ok) {
    const parsed = ApiErrorSchema.safeParse(body);
    throw parsed.success
      ? new ApiError(response.status, parsed.data.error.code, parsed.data.error.message)
      : new ApiError(response.status, 'http_error', `${path} answered ${response.status}`);
  }
  return { status: response.status, body };
}

/** `answer`, the API's answer to `path`, checked against `schema`. */
export function validated<S extends z.ZodType>(schema: S, path: string, answer: ApiAnswer): z.infer<S> {
  const parsed = schema.safeParse(answer.body);
  if (!parsed.success)
    throw new ApiError(answer.status, 'bad_answer', `${path} answered a shape the console does not know`);
  return parsed.data;
}
