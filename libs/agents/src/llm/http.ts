import { AttemptFailure, redact, rejectedFailure, type CallTarget } from './errors';
import type { RequestProblem } from './client-errors';
import { retryAfterMs, type ResolvedSettings } from './retry';

/** Statuses worth another attempt: timeouts, conflicts on the provider's side, rate limits, server errors. */
const TRANSIENT_STATUSES = new Set([408, 409, 429]);
const MAX_ERROR_TEXT = 500;

export interface Attempt<T> {
  target: CallTarget;
  settings: ResolvedSettings;
  /** Where the request goes, for messages. */
  url: string;
  signal?: AbortSignal;
  /**
   * Sends the request through the provider's client and resolves to its 2xx response, body unread; the
   * client throws its own errors for anything else. `signal` ends the request and the body with it.
   */
  send: (signal: AbortSignal) => Promise<Response>;
  /** What an error of the client says about the request; undefined for errors that are not about it. */
  problem: (err: unknown) => RequestProblem | undefined;
  /** Reads a 2xx response; throws `AttemptFailure('malformed')` for answers it cannot use. */
  read: (response: Response) => Promise<T>;
}

/** One request, with the attempt's time limit over the request and the whole answer, failures classified. */
export async function attemptOnce<T>(attempt: Attempt<T>): Promise<T> {
  const { target, settings, signal } = attempt;
  const timeout = AbortSignal.timeout(settings.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const timedOut = () =>
    new AttemptFailure('transient', `no complete answer within ${settings.timeoutMs} ms`);
  let response: Response;
  try {
    response = await attempt.send(combined);
  } catch (err) {
    if (signal?.aborted) throw err;
    if (timeout.aborted) throw timedOut();
    const problem = attempt.problem(err);
    // Anything the client throws that is not about the request (a setting it refuses) is a bug: no retry.
    if (!problem) throw err;
    if (problem.kind === 'timeout') throw timedOut();
    throw problemFailure(target, attempt.url, problem);
  }
  try {
    return await attempt.read(response);
  } catch (err) {
    if (signal?.aborted) throw err;
    if (timeout.aborted) throw timedOut();
    if (err instanceof AttemptFailure) throw err;
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

function problemFailure(
  target: CallTarget,
  url: string,
  problem: Exclude<RequestProblem, { kind: 'timeout' }>,
) {
  if (problem.kind === 'unreachable')
    return new AttemptFailure(
      'transient',
      redact(`could not reach ${url}: ${describe(problem.cause)}`, target.apiKey),
    );
  const message = redact(providerMessage(problem.body), target.apiKey);
  const { status } = problem;
  if (TRANSIENT_STATUSES.has(status) || status >= 500)
    return new AttemptFailure(
      'transient',
      `HTTP ${status}: ${message}`,
      retryAfterMs(problem.headers),
      status,
    );
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
