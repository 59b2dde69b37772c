/** The addresses a server listens on to be reachable from this machine only. */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '::1']);

/** True for an address that only this machine can reach: a browser page is the one remote caller left. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The `Host` and `Origin` of a request, as Node gives them. */
export interface RequestOrigin {
  host?: string | undefined;
  origin?: string | undefined;
}

/**
 * Refuses what a web page may send to a server on this machine: a `Host` other than the server's own loopback
 * address (DNS rebinding: a name the page controls that resolves to 127.0.0.1) and an `Origin` of another
 * site (a page posting across origins). Answers the reason to refuse, or undefined when the request may pass.
 * `trustedOrigins` are browser origins allowed anyway (the API's CORS list).
 */
export function loopbackRefusal(
  port: number,
  request: RequestOrigin,
  trustedOrigins: ReadonlySet<string> = new Set(),
): LoopbackRefusal | undefined {
  const named = ['127.0.0.1', 'localhost', '[::1]'].map((name) => `${name}:${port}`);
  // A browser leaves the default port out of Host and Origin.
  const own = new Set(port === 80 ? [...named, '127.0.0.1', 'localhost', '[::1]'] : named);
  const host = request.host ?? '';
  if (!own.has(host))
    return {
      code: 'host_forbidden',
      message: `Host "${host}" is not this server's address: bound to loopback, it answers only to ${named.join(', ')}`,
    };
  const origin = request.origin;
  if (origin !== undefined && !trustedOrigins.has(origin) && !own.has(hostOf(origin)))
    return {
      code: 'origin_forbidden',
      message: `Origin "${origin}" may not call this server: bound to loopback, it answers pages of ${named.join(', ')} only`,
    };
  return undefined;
}

/** Why a request to a loopback-bound server was refused (answered 403). */
export interface LoopbackRefusal {
  code: 'host_forbidden' | 'origin_forbidden';
  message: string;
}

function hostOf(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    return '';
  }
}
