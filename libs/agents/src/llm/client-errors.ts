import {
  APIConnectionError as AnthropicConnectionError,
  APIConnectionTimeoutError as AnthropicTimeoutError,
  APIError as AnthropicAPIError,
} from '@anthropic-ai/sdk';
import {
  APIConnectionError as OpenAIConnectionError,
  APIConnectionTimeoutError as OpenAITimeoutError,
  APIError as OpenAIAPIError,
} from 'openai';

/** Why a request got no 2xx answer, as the provider's client reported it. */
export type RequestProblem =
  | { kind: 'status'; status: number; headers: Headers; body: string }
  | { kind: 'timeout' }
  | { kind: 'unreachable'; cause: unknown };

/** The problem an official client's error stands for; undefined for errors that are not about the request. */
export function requestProblem(err: unknown): RequestProblem | undefined {
  if (err instanceof OpenAITimeoutError || err instanceof AnthropicTimeoutError) return { kind: 'timeout' };
  if (err instanceof OpenAIConnectionError || err instanceof AnthropicConnectionError)
    return { kind: 'unreachable', cause: err.cause ?? err };
  if (err instanceof OpenAIAPIError && typeof err.status === 'number' && err.headers) {
    // The OpenAI client keeps a JSON body's `error` member (or the whole body when it has none).
    const error: unknown = err.error;
    return status(err.status, err.headers as Headers, error === undefined ? rawText(err) : { error });
  }
  if (err instanceof AnthropicAPIError && typeof err.status === 'number' && err.headers) {
    // The Anthropic client keeps the whole JSON body.
    const body: unknown = err.error;
    return status(err.status, err.headers as Headers, body ?? rawText(err));
  }
  return undefined;
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
