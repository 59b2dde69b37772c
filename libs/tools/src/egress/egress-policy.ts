import { ToolError } from '../tool';
import { classifyAddress, effectiveAddress } from './address-class';
import { entryNamingAddress, entryNamingHost, publicEntry, type AllowEntry } from './allow-list';
import { formatIp, parseIp, type IpAddress } from './ip-address';

/** What `http.request` may reach, read from the deployment's settings (see egress-config.ts). */
export interface EgressPolicy {
  /** `DURA_EGRESS_ALLOW`; empty: every public address, nothing else. */
  entries: readonly AllowEntry[];
  /** Redirects followed per call (each hop checked again); 0: a redirect is the call's result. */
  maxRedirects: number;
  /** Bytes of response body read at most; past it the call fails and nothing of the body is kept. */
  maxResponseBytes: number;
}

export const ALLOW_SETTING = 'DURA_EGRESS_ALLOW';

/** A target the egress policy refuses. Not retryable: the same call is refused every time. */
export class EgressDenied extends ToolError {
  /** The rule that refused it, e.g. `loopback 127.0.0.0/8` or `not in DURA_EGRESS_ALLOW`. */
  readonly rule: string;

  constructor(message: string, rule: string) {
    super('egress_denied', message, { retryable: false });
    this.rule = rule;
  }
}

export interface EgressTarget {
  /** The URL as the caller wrote it (or the redirect pointed to), for the message. */
  url: string;
  /** URL host name without brackets, lower case. */
  host: string;
  port: number;
  /** Every address the name resolved to (the literal for an IP host); the connection uses only these. */
  addresses: readonly IpAddress[];
}

const suggestion = (ip: IpAddress, port: number) =>
  ip.family === 6 ? `[${formatIp(ip)}]:${port}` : `${formatIp(ip)}:${port}`;

function describe(target: EgressTarget, ip: IpAddress): string {
  const literal = parseIp(target.host) !== undefined;
  return literal ? formatIp(ip) : `${target.host} resolved to ${formatIp(ip)}, which`;
}

/** Throws EgressDenied unless every address of the target is allowed; says which rule and which setting. */
export function assertEgressAllowed(policy: EgressPolicy, target: EgressTarget): void {
  const { entries } = policy;
  for (const ip of target.addresses) {
    const effective = effectiveAddress(ip);
    const found = classifyAddress(ip);
    if (found.special) {
      if (entryNamingAddress(entries, [ip, effective], target.port)) continue;
      const rule = `${found.kind} ${found.range}`;
      throw new EgressDenied(
        `egress denied: ${target.url}: ${describe(target, ip)} is a ${found.kind} address (${found.range}). ` +
          'The egress policy refuses loopback, private, link-local, metadata and reserved addresses ' +
          `unless ${ALLOW_SETTING} names the address or its range explicitly (e.g. "${suggestion(effective, target.port)}"). ` +
          'Do not retry this call; use a public URL or ask an operator.',
        rule,
      );
    }
    if (entries.length === 0) continue;
    if (
      publicEntry(entries, target.port) ??
      entryNamingHost(entries, target.host, target.port) ??
      entryNamingAddress(entries, [ip, effective], target.port)
    )
      continue;
    const host = parseIp(target.host) ? suggestion(ip, target.port) : `${target.host}:${target.port}`;
    throw new EgressDenied(
      `egress denied: ${target.url}: ${target.host} (${formatIp(ip)}) port ${target.port} matches no entry of ` +
        `${ALLOW_SETTING} (${entries.map((e) => e.text).join(', ')}); an operator must add "${host}" to allow it. ` +
        'Do not retry this call.',
      `not in ${ALLOW_SETTING}`,
    );
  }
}

/** A URL scheme other than http/https is refused before anything is resolved. */
export function deniedScheme(url: string, protocol: string): EgressDenied {
  return new EgressDenied(
    `egress denied: ${url}: only http: and https: URLs may be requested, not ${protocol}. Do not retry this call.`,
    `scheme ${protocol}`,
  );
}
