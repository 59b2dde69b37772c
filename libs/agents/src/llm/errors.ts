import { DuraError } from '@dura/contracts';

/**
 * Why one attempt failed, as the retry loop acts on it: `transient` (rate limit, 5xx, network) and
 * `malformed` (an answer Dura cannot read) are retried; `rejected` ends the call at once.
 */
export type FailureKind = 'transient' | 'malformed' | 'rejected';

/** One failed attempt. Its message is already redacted; the retry loop turns the last one into a `DuraError`. */
export class AttemptFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly retryAfterMs?: number,
    /** The HTTP status the provider answered with, when it answered. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'AttemptFailure';
  }
}

/** Who is being called, for error messages that say where to look. */
export interface CallTarget {
  provider: 'openai' | 'anthropic';
  baseUrl: string;
  model: string;
  apiKey?: string;
}

const REDACTED = '[redacted]';

/** Removes the API key from `text`, and key-like words that start like it (providers echo masked keys). */
export function redact(text: string, apiKey: string | undefined): string {
  if (!apiKey || apiKey.length < 4) return text;
  let out = text.split(apiKey).join(REDACTED);
  if (apiKey.length >= 16) {
    const head = apiKey.slice(0, 8).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`${head}\\S*`, 'g'), REDACTED);
  }
  return out;
}

/** The provider refused the request itself; sending it again would fail the same way. */
export function rejectedFailure(target: CallTarget, status: number, providerMessage: string): AttemptFailure {
  const what =
    status === 401 || status === 403
      ? `${target.provider} rejected the API key (HTTP ${status}): ${providerMessage}. Check the API key configured for ${target.baseUrl}.`
      : `${target.provider} rejected the request (HTTP ${status}): ${providerMessage}. Check the agent's model ` +
        `settings (model "${target.model}", max tokens, tools) and the base URL ${target.baseUrl}.`;
  return new AttemptFailure('rejected', redact(what, target.apiKey));
}

/** The error a call ends with after its last failed attempt. */
export function finalError(target: CallTarget, last: AttemptFailure, attempts: number): DuraError {
  const tried = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  const detail = redact(last.message, target.apiKey);
  switch (last.kind) {
    case 'rejected':
      return new DuraError('model_request_rejected', detail, { retryable: false, cause: last });
    case 'malformed':
      return new DuraError(
        'model_bad_response',
        `${target.provider} sent no usable answer for model "${target.model}" after ${tried} (last: ${detail}). ` +
          `Check that ${target.baseUrl} serves the ${apiName(target)} and that the model supports tool calling.`,
        { retryable: false, cause: last },
      );
    case 'transient':
      return new DuraError(
        'model_unavailable',
        `${target.provider} is unavailable for model "${target.model}" after ${tried} (last: ${detail}). ` +
          `The run can be retried later; if this persists, check that ${target.baseUrl} is reachable.`,
        { retryable: true, cause: last },
      );
  }
}

/** The caller aborted; nothing more is attempted. */
export function abortedError(target: CallTarget, signal: AbortSignal): DuraError {
  const reason: unknown = signal.reason;
  const why = reason instanceof Error ? reason.message : String(reason);
  return new DuraError(
    'model_call_aborted',
    redact(`the ${target.provider} call for model "${target.model}" was aborted: ${why}`, target.apiKey),
    { retryable: false, cause: reason },
  );
}

function apiName(target: CallTarget): string {
  return target.provider === 'openai' ? 'OpenAI Chat Completions API' : 'Anthropic Messages API';
}
