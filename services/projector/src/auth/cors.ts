/** Browser origins allowed to call the API; empty: CORS is off and browsers on other origins are refused. */
export interface CorsPolicy {
  origins: ReadonlySet<string>;
}

/** Parses `PROJECTOR_CORS_ORIGINS` (comma-separated); trailing slashes dropped, as browsers send none. */
export function corsPolicy(list: string | undefined): CorsPolicy {
  const origins = (list ?? '')
    .split(',')
    .map((origin) => origin.trim().replace(/\/+$/, ''))
    .filter((origin) => origin !== '');
  for (const origin of origins)
    if (origin !== originOf(origin))
      throw new Error(
        `PROJECTOR_CORS_ORIGINS: "${origin}" is not an origin; give scheme, host and port only, e.g. https://ops.example.com`,
      );
  return { origins: new Set(origins) };
}

/** Headers for a response to `origin`: none unless the origin is allowed. */
export function corsHeaders(policy: CorsPolicy, origin: string | undefined): Record<string, string> {
  if (policy.origins.size === 0) return {};
  // Vary on every answer, so a cache never serves one origin's answer to another.
  if (origin === undefined || !policy.origins.has(origin)) return { vary: 'Origin' };
  return { 'access-control-allow-origin': origin, vary: 'Origin' };
}

/** Headers of the answer to a preflight (`OPTIONS`) from an allowed origin. */
export function preflightHeaders(policy: CorsPolicy, origin: string | undefined): Record<string, string> {
  const base = corsHeaders(policy, origin);
  if (!('access-control-allow-origin' in base)) return base;
  return {
    ...base,
    'access-control-allow-methods': 'GET, POST, DELETE',
    'access-control-allow-headers': 'authorization, content-type, last-event-id',
    'access-control-max-age': '600',
  };
}

function originOf(text: string): string | undefined {
  try {
    return new URL(text).origin;
  } catch {
    return undefined;
  }
}
