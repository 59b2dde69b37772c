import { APICallError } from '@ai-sdk/provider';
import { DuraError } from '@dura/contracts';

/**
 * A failed provider call as the planner acts on it: a refusal the provider would repeat (`isRetryable`
 * false: a bad request, a rejected key) fails the run with `model_request_rejected`; anything else
 * (unavailable, rate-limited, a cut connection) is retried later, and nothing of it is recorded.
 */
export function providerFailure(error: unknown, model: { provider: string; modelId: string }): DuraError {
  if (error instanceof DuraError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const who = `${model.provider} model "${model.modelId}"`;
  if (APICallError.isInstance(error) && !error.isRetryable)
    return new DuraError(
      'model_request_rejected',
      `${who} refused the request${error.statusCode ? ` (HTTP ${error.statusCode})` : ''}: ${message}. ` +
        "Check the model's settings, its API key and the call's options.",
      { retryable: false, cause: error },
    );
  return new DuraError('model_unavailable', `${who} could not answer: ${message}`, {
    retryable: true,
    cause: error,
  });
}
