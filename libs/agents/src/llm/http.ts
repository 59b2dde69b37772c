import { AttemptFailure, redact, rejectedFailure, type CallTarget } from './errors';
import { retryAfterMs, type ResolvedSettings } from './retry';

/** Statuses worth another attempt: timeouts, conflicts on the provider's side, rate limits, server errors. */
const TRANSIENT_STATUSES = new Set([408, 409, 429]);
const MAX_ERROR_TEXT = 500;

export interface PostAttempt<T> {
  target: CallTarget;
  settings: ResolvedSettings;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  signal?: AbortSignal;
  /** Reads a 2xx response; throws `AttemptFailure('malformed')` for answers it cannot use. */
  read: (response: Response) => Promise<T>;
}

/** One POST, with the attempt's time limit over the request and the whole answer, failures classified. */
export async function postOnce<T>(attempt: PostAttempt<T>): Promise<T> {
  const { target, settings, signal } = attempt;
  const timeout = AbortSignal.timeout(settings.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const timedOut = () =>
    new AttemptFailure('transient', `no complete answer within ${settings.timeoutMs} ms`);
  let response: Response;
  try {
    response = await settings.fetch(attempt.url, {
      method: 'POST',
      headers: attempt.headers,
      body: JSON.stringify(attempt.body),
      signal: combined,
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    if (timeout.aborted) throw timedOut();
    throw new AttemptFailure(
      'transient',
      redact(`could not reach ${attempt.url}: ${describe(err)}`, target.apiKey),
    );
  }
  if (!response.ok) throw await statusFailure(target, response);
  try {
    return await attempt.read(response);
  } catch (err) {
    if (err instanceof AttemptFailure || signal?.aborted) throw err;
    if (timeout.aborted) throw timedOut();
    throw new AttemptFailure(
      'transient',
      redact(`the connection broke mid-answer: ${describe(err)}`, target.apiKey),
    );
  }
}

/** Reads a 2xx body as JSON. */
export async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AttemptFailure('malformed', `the response body is not JSON: ${snippet(text)}`);
  }
}

async function statusFailure(target: CallTarget, response: Response): Promise<AttemptFailure> {
  const text = await response.text().catch(() => '');
  const message = redact(providerMessage(text), target.apiKey);
  const { status } = response;
  if (TRANSIENT_STATUSES.has(status) || status >= 500)
    return new AttemptFailure('transient', `HTTP ${status}: ${message}`, retryAfterMs(response.headers));
  return rejectedFailure(target, status, message);
}

/** The human part of an error body: `{error: {message}}` (both providers), `{error: "..."}`, or the raw text. */
function providerMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error = body.error as { message?: unknown } | string | undefined;
    if (typeof error === 'string') return snippet(error);
    if (typeof error?.message === 'string') return snippet(error.message);
    if (typeof body.message === 'string') return snippet(body.message);
  } catch {
    // Not JSON: the raw text is the best description there is.
  }
  return text.trim() === '' ? 'no error message' : snippet(text);
}

export function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_ERROR_TEXT ? `${flat.slice(0, MAX_ERROR_TEXT)}…` : flat;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${err.message}${cause}`;
}
