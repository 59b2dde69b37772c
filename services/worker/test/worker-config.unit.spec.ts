import { describe, expect, it } from 'vitest';
import { PlannerConfigSchema } from '@dura/planner';
import { GatewayConfigSchema } from '@dura/tool-gateway';
import { loadWorkerConfig, WORKER_DEFAULT_CONCURRENCY, WorkerConfigSchema } from '../src/config';

const env = { DATABASE_URL: 'postgres://dura@127.0.0.1/dura' };

describe('the worker configuration', () => {
  it('reads every variable of the planner and of the gateway but PLANNER_DIRECT_CALLS: its calls run in place', () => {
    const keys = Object.keys(WorkerConfigSchema.shape);
    const planner = Object.keys(PlannerConfigSchema.shape).filter((key) => key !== 'PLANNER_DIRECT_CALLS');
    expect(keys).toEqual(expect.arrayContaining(planner));
    expect(keys).not.toContain('PLANNER_DIRECT_CALLS');
    expect(keys).toEqual(expect.arrayContaining(Object.keys(GatewayConfigSchema.shape)));
    expect(loadWorkerConfig(env).planner.PLANNER_DIRECT_CALLS).toBe(false);
    expect(loadWorkerConfig({ ...env, PLANNER_DIRECT_CALLS: 'true' }).planner.PLANNER_DIRECT_CALLS).toBe(
      false,
    );
  });

  it('given no PLANNER_CONCURRENCY, takes 64 runs at once; given one, that many', () => {
    expect(loadWorkerConfig(env).planner.PLANNER_CONCURRENCY).toBe(WORKER_DEFAULT_CONCURRENCY);
    expect(loadWorkerConfig({ ...env, PLANNER_CONCURRENCY: '8' }).planner.PLANNER_CONCURRENCY).toBe(8);
  });

  it('gives the planner and the gateway the same values of the variables both read', () => {
    const config = loadWorkerConfig({ ...env, SHUTDOWN_GRACE_MS: '40000', GATEWAY_CONCURRENCY: '5' });
    expect(config.planner.SHUTDOWN_GRACE_MS).toBe(40_000);
    expect(config.gateway.SHUTDOWN_GRACE_MS).toBe(40_000);
    expect(config.gateway.GATEWAY_CONCURRENCY).toBe(5);
    expect(config.gateway.DATABASE_URL).toBe(env.DATABASE_URL);
  });

  it('refuses a configuration without DATABASE_URL, naming it and the worker', () => {
    expect(() => loadWorkerConfig({})).toThrow(/worker[\s\S]*DATABASE_URL/);
  });
});
