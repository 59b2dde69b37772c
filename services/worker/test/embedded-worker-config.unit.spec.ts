import { describe, expect, it } from 'vitest';
import { loadEmbeddedWorkerConfig, loadWorkerConfig, WORKER_DEFAULT_CONCURRENCY } from '../src/config';

describe('a worker configuration for a process that opens its own database', () => {
  it('given no variables, has the worker defaults and no DATABASE_URL', () => {
    const config = loadEmbeddedWorkerConfig('dura dev', {});
    const worker = loadWorkerConfig({ DATABASE_URL: 'postgres://dura@127.0.0.1/dura' });
    expect(config.planner).toEqual(worker.planner);
    expect(config.planner.PLANNER_CONCURRENCY).toBe(WORKER_DEFAULT_CONCURRENCY);
    expect(config.gateway).not.toHaveProperty('DATABASE_URL');
    const { DATABASE_URL: _url, ...gateway } = worker.gateway;
    expect(config.gateway).toEqual(gateway);
  });

  it('gives the planner and the gateway the values it is given', () => {
    const config = loadEmbeddedWorkerConfig('dura dev', {
      DURA_INLINE_PLANS: 'true',
      DURA_PAYLOAD_THRESHOLD_BYTES: '1024',
    });
    expect(config.planner.DURA_INLINE_PLANS).toBe(true);
    expect(config.planner.DURA_PAYLOAD_THRESHOLD_BYTES).toBe(1024);
    expect(config.gateway.DURA_PAYLOAD_THRESHOLD_BYTES).toBe(1024);
  });

  it('refuses a bad value, naming the service and the variable', () => {
    expect(() => loadEmbeddedWorkerConfig('dura dev', { PLANNER_CODE_CONTINUATIONS: '-1' })).toThrow(
      /dura dev[\s\S]*PLANNER_CODE_CONTINUATIONS/,
    );
  });
});
