import { describe, expect, it } from 'vitest';
import { UserError } from '@openai/agents';
import { providerFailure } from '../src/provider-errors';

describe('a failed Agents SDK model call, as the planner acts on it', () => {
  it('given the SDK refusing the request itself, then the run fails (no retry would get past it)', () => {
    const failure = providerFailure(
      new UserError('outputSchema is only supported with the Responses API'),
      'm',
    );
    expect(failure.code).toBe('model_request_rejected');
    expect(failure.retryable).toBe(false);
    expect(failure.message).toMatch(/"m" refused the request before sending it: outputSchema is only/);
  });

  it('given an HTTP 400, then the run fails; given a 429, a 503 or a cut connection, then it is retried', () => {
    const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { status: code });
    expect(providerFailure(status(400), 'm')).toMatchObject({
      code: 'model_request_rejected',
      retryable: false,
    });
    for (const error of [status(429), status(503), new Error('socket hang up')])
      expect(providerFailure(error, 'm')).toMatchObject({ code: 'model_unavailable', retryable: true });
  });
});
