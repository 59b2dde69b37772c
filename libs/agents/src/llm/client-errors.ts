import type * as AnthropicSdk from '@anthropic-ai/sdk';
import type * as OpenAISdk from 'openai';

/** Why a request got no 2xx answer, as the provider's client reported it. */
export type RequestProblem =
  | { kind: 'status'; status: number; headers: Headers; body: string }
  | { kind: 'timeout' }
  | { kind: 'unreachable'; cause: unknown };

/** The OpenAI client keeps a JSON error body's `error` member (or the whole body when it has none). */
export function openAIProblem(sdk: typeof OpenAISdk, err: unknown): RequestProblem | undefined {
  if (err instanceof sdk.APIConnectionTimeoutError) return { kind: 'timeout' };
  if (err instanceof sdk.APIConnectionError) return { kind: 'unreachable', cause: err.cause ?? err };
  if (!(err instanceof sdk.APIError) || typeof err.status !== 'number' || !err.headers) return undefined;
  const error: unknown = err.error;
  return status(err.status, err.headers as Headers, error === undefined ? rawText(err) : { error });
}

/** The Anthropic client keeps the whole JSON error body. */
export function anthropicProblem(sdk: typeof AnthropicSdk, err: unknown): RequestProblem | undefined {
  if (err instanceof sdk.APIConnectionTimeoutError) return { kind: 'timeout' };
  if (err instanceof sdk.APIConnectionError) return { kind: 'unreachable', cause: err.cause ?? err };
  if (!(err instanceof sdk.APIError) || typeof err.status !== 'number' || !err.headers) return undefined;
  const body: unknown = err.error;
  return status(err.status, err.headers as Headers, body ?? rawText(err));
}

function status(code: number, headers: Headers, body: unknown): RequestProblem {
  return {
    kind: 'status',
    status: code,
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/** A body that is not JSON reaches the client's error only as its message, after the status. */
function rawText(err: { status?: number; message: string }): string {
  const prefix = `${err.status} `;
  if (err.message === `${err.status} status code (no body)` || !err.message.startsWith(prefix)) return '';
  return err.message.slice(prefix.length);
}
