import { afterAll, describe, expect, it } from 'vitest';
import { createLogger, startServiceTelemetry, type ServiceTelemetry } from '../src/index';

const log = createLogger({ service: 'readiness-test', level: 'error', write: () => undefined });
let service: ServiceTelemetry | undefined;

afterAll(async () => {
  await service?.stop();
});

async function get(path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${service!.http!.url}${path}`);
  return { status: response.status, body: await response.json() };
}

describe('the health port', () => {
  it('is alive at once, ready only once the service says so, and not ready while its check fails', async () => {
    service = await startServiceTelemetry({ service: 'readiness-test', log, metricsPort: 0 });
    expect(await get('/healthz')).toEqual({ status: 200, body: { ok: true } });
    expect(await get('/readyz')).toEqual({ status: 503, body: { ready: false, reason: 'starting' } });

    const state: { reason?: string } = {};
    service.ready(() => Promise.resolve(state.reason));
    expect(await get('/readyz')).toEqual({ status: 200, body: { ready: true } });
    state.reason = 'the NATS connection is closed';
    expect(await get('/readyz')).toEqual({ status: 503, body: { ready: false, reason: state.reason } });
    service.ready(() => Promise.reject(new Error('connection refused')));
    expect(await get('/readyz')).toEqual({
      status: 503,
      body: { ready: false, reason: 'connection refused' },
    });
  });
});
