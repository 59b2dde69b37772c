/** Per-tenant limits on runs in flight, parsed from `PLANNER_TENANT_MAX_RUNS` (pure: no I/O). */

/** `wait`: a request over its tenant's limit waits in `dura.submit`; `reject`: it gets `run_rejected`. */
export type TenantLimitPolicy = 'wait' | 'reject';

export interface TenantLimits {
  /** Limits of named tenants. */
  byTenant: ReadonlyMap<string, number>;
  /** The limit of every tenant not named (`*=N`); undefined: those tenants have no limit. */
  fallback?: number;
  policy: TenantLimitPolicy;
}

/** `acme=10,*=100`: tenant names (letters, digits, `_`, `-`) or `*`, each with a positive whole number. */
export const TENANT_MAX_RUNS_PATTERN =
  /^\s*(?:[A-Za-z0-9_-]+|\*)\s*=\s*[1-9]\d*\s*(?:,\s*(?:[A-Za-z0-9_-]+|\*)\s*=\s*[1-9]\d*\s*)*$/;

/** The rejection code of a run refused because its tenant is at its limit (policy `reject`). */
export const TENANT_LIMIT_CODE = 'tenant_limit';

/** Parses `acme=10,*=100`; throws (naming the bad entry) on anything else, since config loading checks it first. */
export function parseTenantLimits(text: string, policy: TenantLimitPolicy): TenantLimits {
  if (!TENANT_MAX_RUNS_PATTERN.test(text))
    throw new Error(
      `PLANNER_TENANT_MAX_RUNS "${text}" is not a list like "acme=10,*=100" (tenant or * = positive number, comma-separated)`,
    );
  const byTenant = new Map<string, number>();
  let fallback: number | undefined;
  for (const entry of text.split(',')) {
    const [name, limit] = entry.split('=').map((part) => part.trim()) as [string, string];
    const seen = name === '*' ? fallback !== undefined : byTenant.has(name);
    if (seen)
      throw new Error(`PLANNER_TENANT_MAX_RUNS names "${name}" twice; give each tenant (and *) one limit`);
    if (name === '*') fallback = Number(limit);
    else byTenant.set(name, Number(limit));
  }
  return { byTenant, ...(fallback !== undefined ? { fallback } : {}), policy };
}

/** The tenant's limit on runs in flight, or undefined when it has none. */
export function tenantLimit(limits: TenantLimits, tenant: string): number | undefined {
  return limits.byTenant.get(tenant) ?? limits.fallback;
}
