import { describe, expect, it } from 'vitest';
import { PlannerConfigSchema } from '../src/config';
import { parseTenantLimits, tenantLimit } from '../src/tenant-limits';

describe('PLANNER_TENANT_MAX_RUNS', () => {
  it('gives named tenants their limit and every other tenant the `*` limit', () => {
    const limits = parseTenantLimits(' acme=10 , *=100,beta_2-x=1', 'wait');
    expect(tenantLimit(limits, 'acme')).toBe(10);
    expect(tenantLimit(limits, 'beta_2-x')).toBe(1);
    expect(tenantLimit(limits, 'default')).toBe(100);
    expect(limits.policy).toBe('wait');
  });

  it('leaves tenants not named unlimited when there is no `*`', () => {
    const limits = parseTenantLimits('acme=2', 'reject');
    expect(tenantLimit(limits, 'acme')).toBe(2);
    expect(tenantLimit(limits, 'other')).toBeUndefined();
  });

  it('refuses malformed lists, zero limits and a tenant named twice, saying what is expected', () => {
    for (const bad of ['', 'acme', 'acme=0', 'acme=-1', 'acme=1,', 'ac.me=1', 'acme=1.5'])
      expect(() => parseTenantLimits(bad, 'wait'), bad).toThrow(/like "acme=10,\*=100"/);
    expect(() => parseTenantLimits('acme=1,acme=2', 'wait')).toThrow(/names "acme" twice/);
    expect(() => parseTenantLimits('*=1,*=2', 'wait')).toThrow(/names "\*" twice/);
  });

  it('is checked when the config loads, and the policy defaults to wait', () => {
    const ok = PlannerConfigSchema.parse({ PLANNER_TENANT_MAX_RUNS: 'acme=10,*=100' });
    expect(ok.PLANNER_TENANT_LIMIT_POLICY).toBe('wait');
    expect(PlannerConfigSchema.safeParse({ PLANNER_TENANT_MAX_RUNS: 'acme=ten' }).success).toBe(false);
    expect(PlannerConfigSchema.safeParse({ PLANNER_TENANT_LIMIT_POLICY: 'drop' }).success).toBe(false);
  });
});
