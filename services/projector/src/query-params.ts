import { DuraError, RunIdSchema, RunStateQuerySchema } from '@dura/contracts';

/** 404: the run, or the event asked for, is not in the log as the projection knows it. */
export class NotFound extends DuraError {
  constructor(code: 'run_not_found' | 'event_not_found', message: string) {
    super(code, message);
  }
}

/** 400: a query parameter, path parameter or header the API cannot read. */
export class BadQuery extends DuraError {
  constructor(message: string, code = 'bad_query') {
    super(code, message);
  }
}

/** An optional integer parameter in `[min, max]`; `clamp` caps values above `max` instead of refusing them. */
export function intParam(
  query: URLSearchParams,
  name: string,
  fallback: number,
  range: { min?: number; max?: number; clamp?: boolean } = {},
): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  return parseIntIn(raw, `query parameter ${name}`, range);
}

/** Parses `raw` as an integer in `[min, max]`, naming `what` in the error. */
export function parseIntIn(
  raw: string,
  what: string,
  { min = 0, max = Number.MAX_SAFE_INTEGER, clamp = false }: { min?: number; max?: number; clamp?: boolean },
): number {
  const value = raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isSafeInteger(value) || value < min || (!clamp && value > max)) {
    const range = clamp || max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new BadQuery(`${what} must be an integer ${range}, got "${raw}"`);
  }
  return Math.min(value, max);
}

/** The `:id` of a path, checked to be a run id (it becomes a NATS subject token, so no wildcards). */
export function runIdParam(params: Record<string, string>): string {
  const id = params['id'] ?? '';
  const parsed = RunIdSchema.safeParse(id);
  if (!parsed.success) {
    throw new BadQuery(
      `"${id}" is not a run id: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      'bad_run_id',
    );
  }
  return id;
}

/** `GET /runs/:id/events`: page size when none is asked for, and the most one page holds. */
export const EVENTS_DEFAULT_LIMIT = 100;
export const EVENTS_MAX_LIMIT = 1000;

/** `GET /runs/:id?calls=`: whether the state goes out with its calls (`all`, the default) or without (`none`). */
export function callsParam(query: URLSearchParams): 'all' | 'none' {
  const raw = query.get('calls');
  const parsed = RunStateQuerySchema.safeParse(raw === null ? {} : { calls: raw });
  if (!parsed.success)
    throw new BadQuery(
      `query parameter calls must be "all" (the full state) or "none" (the state without its calls), got "${raw ?? ''}"`,
    );
  return parsed.data.calls;
}
