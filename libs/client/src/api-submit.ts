import { ApiErrorSchema, SubmitAcceptedSchema, type SubmitAccepted, type SubmitBody } from '@dura/contracts';
import { ApiError, ApiUnreachable, ClientNotConfigured } from './errors';
import type { ReadApiOptions } from './read-api';

export interface ApiSubmitOptions {
  /** The run id to use (in the caller's tenant namespace); not with `debounce`, whose window names the run. */
  idempotencyKey?: string;
}

/**
 * `POST /runs` through the projector's API: the only door that takes `debounce` and `dedupe` (a request on
 * `dura.submit` is past every gate). The answer says what happened: `outcome` `started`, `debounced` (with the
 * run id its window starts and `fireAt`) or `skipped` (the key's run in flight as `runId`, and the `reason`).
 */
export function createApiSubmit(options: ReadApiOptions) {
  const doFetch = options.fetch ?? globalThis.fetch;
  return async function submitRunOverApi(
    body: SubmitBody,
    submit: ApiSubmitOptions = {},
  ): Promise<SubmitAccepted> {
    if (!options.apiUrl)
      throw new ClientNotConfigured(
        'api_not_configured',
        "submitRunOverApi posts to the projector's HTTP API: pass apiUrl to createDuraClient",
      );
    const url = `${options.apiUrl.replace(/\/+$/, '')}/runs`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.apiToken) headers['authorization'] = `Bearer ${options.apiToken}`;
    if (submit.idempotencyKey !== undefined) headers['idempotency-key'] = submit.idempotencyKey;
    let response: Response;
    try {
      response = await doFetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
    } catch (err) {
      throw new ApiUnreachable(url, err);
    }
    const answer: unknown = await response.json().catch(() => undefined);
    if (!response.ok) {
      const parsed = ApiErrorSchema.safeParse(answer);
      const { code, message } = parsed.success
        ? parsed.data.error
        : { code: 'api_error', message: `HTTP ${response.status}` };
      throw new ApiError(code, `${message} (POST ${url}, HTTP ${response.status})`, response.status);
    }
    const parsed = SubmitAcceptedSchema.safeParse(answer);
    if (!parsed.success)
      throw new ApiError(
        'bad_api_response',
        `${url} answered with a body this client cannot read: is it a Dura projector of a matching version?`,
        response.status,
      );
    return parsed.data;
  };
}
