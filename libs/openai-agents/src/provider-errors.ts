import { UserError } from '@openai/agents';
import { DuraError } from '@dura/contracts';

const RETRYABLE_STATUS = new Set([408, 409, 429]);

/**
 * A failed model call as the planner acts on it: an HTTP 4xx the provider would repeat (a bad request, a
 * rejected key) fails the run with `model_request_rejected`, as does the SDK's own refusal of the request
 * (a `UserError`: a setting or tool its model does not support), which every retry would meet again; anything
 * else (unavailable, rate-limited, a cut connection) is retried later, and nothing of it is recorded.
 */
export function providerFailure(error: unknown, model: string): DuraError {
  if (error instanceof DuraError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const status = (error as { status?: unknown } | null)?.status;
  const who = `the Agents SDK model "${model}"`;
  if (error instanceof UserError)
    return new DuraError(
      'model_request_rejected',
      `${who} refused the request before sending it: ${message}. Change the agent's model settings or ` +
        'tools to ones this model supports.',
      { retryable: false, cause: error },
    );
  if (typeof status === 'number' && status >= 400 && status < 500 && !RETRYABLE_STATUS.has(status))
    return new DuraError(
      'model_request_rejected',
      `${who} refused the request (HTTP ${status}): ${message}. Check the model's name, its API key and ` +
        "the agent's model settings.",
      { retryable: false, cause: error },
    );
  return new DuraError('model_unavailable', `${who} could not answer: ${message}`, {
    retryable: true,
    cause: error,
  });
}
