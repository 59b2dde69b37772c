import { formatIp, inCidr, parseIpv4, parseIpv6, type IpAddress } from './ip-address';

/** One entry of `DURA_EGRESS_ALLOW`; `port` undefined means every port. */
export type AllowEntry =
  | { kind: 'public'; port: number | undefined; text: string }
  | { kind: 'host'; host: string; port: number | undefined; text: string }
  | { kind: 'suffix'; suffix: string; port: number | undefined; text: string }
  | { kind: 'cidr'; network: IpAddress; prefix: number; port: number | undefined; text: string };

export const ALLOW_ENTRY_FORMAT =
  '`public`, a host (`api.example.com`), `*.example.com`, an IP (`10.1.2.3`, `[::1]`) or CIDR (`10.0.0.0/8`, `[fc00::/7]`), each with an optional `:port`';

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function parsePort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

function parseNetwork(text: string): { network: IpAddress; prefix: number } | string {
  const [addressText = '', prefixText, extra] = text.split('/');
  if (extra !== undefined) return 'more than one "/"';
  const network = parseIpv4(addressText) ?? parseIpv6(addressText);
  if (!network) return `"${addressText}" is not an IP address`;
  const max = network.family === 4 ? 32 : 128;
  if (prefixText === undefined) return { network, prefix: max };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max)
    return `prefix "/${prefixText}" must be 0 to ${max}`;
  const prefix = Number(prefixText);
  const base: IpAddress = {
    family: network.family,
    bytes: network.bytes.map((byte, i) => {
      const keep = Math.max(0, Math.min(8, prefix - i * 8));
      return byte & ((0xff << (8 - keep)) & 0xff);
    }),
  };
  if (formatIp(base) !== formatIp(network))
    return `host bits are set; the network is ${formatIp(base)}/${prefix}`;
  return { network, prefix };
}

function isHostName(text: string): boolean {
  return text.length <= 253 && text.split('.').every((label) => HOST_LABEL.test(label));
}

/** Parses one entry, or says what is wrong with it. */
export function parseAllowEntry(raw: string): AllowEntry | string {
  const text = raw.trim().toLowerCase();
  let target = text;
  let port: number | undefined;
  let portText: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return `"${raw}": "[" without "]"`;
    target = text.slice(1, close);
    const after = text.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) return `"${raw}": expected ":port" after "]"`;
      portText = after.slice(1);
    }
    if (!target.includes(':')) return `"${raw}": brackets are for IPv6 addresses`;
  } else if ((text.match(/:/g) ?? []).length === 1) {
    [target = '', portText] = text.split(':');
  }
  if (portText !== undefined) {
    port = parsePort(portText);
    if (port === undefined) return `"${raw}": port "${portText}" must be a number from 1 to 65535`;
  }
  if (target === 'public') return { kind: 'public', port, text: raw.trim() };
  if (target.includes(':') || target.includes('/') || parseIpv4(target.split('/')[0] ?? '')) {
    const network = parseNetwork(target);
    if (typeof network === 'string') return `"${raw}": ${network}`;
    return { kind: 'cidr', ...network, port, text: raw.trim() };
  }
  if (target.startsWith('*.')) {
    const suffix = target.slice(2).replace(/\.$/, '');
    if (!isHostName(suffix) || !suffix.includes('.'))
      return `"${raw}": "*." must be followed by a domain of two labels or more, e.g. *.example.com`;
    return { kind: 'suffix', suffix, port, text: raw.trim() };
  }
  const host = target.replace(/\.$/, '');
  if (/^[\d.]+$/.test(host) || !isHostName(host))
    return `"${raw}": not a host name, IP address or CIDR (expected ${ALLOW_ENTRY_FORMAT})`;
  return { kind: 'host', host, port, text: raw.trim() };
}

/** Parses a comma-separated `DURA_EGRESS_ALLOW`; `problems` lists every bad entry. */
export function parseAllowList(value: string | undefined): { entries: AllowEntry[]; problems: string[] } {
  const entries: AllowEntry[] = [];
  const problems: string[] = [];
  for (const raw of (value ?? '').split(',')) {
    if (raw.trim() === '') continue;
    const parsed = parseAllowEntry(raw);
    if (typeof parsed === 'string') problems.push(parsed);
    else entries.push(parsed);
  }
  return { entries, problems };
}

const portMatches = (entry: AllowEntry, port: number) => entry.port === undefined || entry.port === port;

/** The entry that names this address explicitly (an IP or CIDR entry containing it), if any. */
export function entryNamingAddress(
  entries: readonly AllowEntry[],
  addresses: readonly IpAddress[],
  port: number,
): AllowEntry | undefined {
  return entries.find(
    (entry) =>
      entry.kind === 'cidr' &&
      portMatches(entry, port) &&
      addresses.some((ip) => inCidr(ip, entry.network, entry.prefix)),
  );
}

/** The entry that names this host (exactly, or by a `*.` suffix), if any. */
export function entryNamingHost(
  entries: readonly AllowEntry[],
  host: string,
  port: number,
): AllowEntry | undefined {
  const name = host.toLowerCase().replace(/\.$/, '');
  return entries.find(
    (entry) =>
      portMatches(entry, port) &&
      ((entry.kind === 'host' && entry.host === name) ||
        (entry.kind === 'suffix' && name.endsWith(`.${entry.suffix}`))),
  );
}

/** The `public` entry covering this port, if any. */
export function publicEntry(entries: readonly AllowEntry[], port: number): AllowEntry | undefined {
  return entries.find((entry) => entry.kind === 'public' && portMatches(entry, port));
}
