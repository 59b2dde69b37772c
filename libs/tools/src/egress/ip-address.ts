/** An IP address as its bytes: 4 for IPv4, 16 for IPv6. Pure: no `node:net`, so it is unit-testable anywhere. */
export interface IpAddress {
  family: 4 | 6;
  bytes: readonly number[];
}

const IPV4_PART = /^(0|[1-9]\d{0,2})$/;

/** Strict dotted-quad IPv4 (`127.0.0.1`); octal, hex and short forms are not addresses here. */
export function parseIpv4(text: string): IpAddress | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!IPV4_PART.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes.push(value);
  }
  return { family: 4, bytes };
}

const HEXTET = /^[0-9a-f]{1,4}$/i;

function hextets(groups: string[]): number[] | undefined {
  const out: number[] = [];
  for (const group of groups) {
    if (!HEXTET.test(group)) return undefined;
    const value = parseInt(group, 16);
    out.push(value >> 8, value & 0xff);
  }
  return out;
}

/** IPv6 text (`::1`, `fe80::1%eth0`, `::ffff:127.0.0.1`, with or without brackets) to its 16 bytes. */
export function parseIpv6(text: string): IpAddress | undefined {
  let body = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = body.indexOf('%');
  if (zone >= 0) body = body.slice(0, zone);
  if (!body.includes(':')) return undefined;
  let tail: readonly number[] = [];
  const lastColon = body.lastIndexOf(':');
  const last = body.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIpv4(last);
    if (!v4) return undefined;
    tail = v4.bytes;
    body = body.slice(0, lastColon + 1);
    if (!body.endsWith('::')) body = body.slice(0, -1);
  }
  const halves = body.split('::');
  if (halves.length > 2) return undefined;
  const want = (16 - tail.length) / 2;
  const split = (half: string | undefined) => (half ? half.split(':') : []);
  const head = hextets(split(halves[0]));
  const rest = halves.length === 2 ? hextets(split(halves[1])) : [];
  if (!head || !rest) return undefined;
  const given = (head.length + rest.length) / 2;
  // `::` stands for one group or more, so with it fewer groups are given; without it, exactly all.
  if (halves.length === 1 ? given !== want : given > want - 1) return undefined;
  const zeros = new Array<number>((want - given) * 2).fill(0);
  const bytes = [...head, ...zeros, ...rest, ...tail];
  return bytes.length === 16 ? { family: 6, bytes } : undefined;
}

/** Either family; undefined for anything that is not an IP literal (a host name). */
export function parseIp(text: string): IpAddress | undefined {
  return parseIpv4(text) ?? parseIpv6(text);
}

/** Canonical text: dotted quad, or compressed lower-case IPv6 (RFC 5952) without brackets. */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return ip.bytes.join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((ip.bytes[i] ?? 0) << 8) | (ip.bytes[i + 1] ?? 0));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/** Whether `ip` lies in `network/prefix` (same family only). */
export function inCidr(ip: IpAddress, network: IpAddress, prefix: number): boolean {
  if (ip.family !== network.family) return false;
  for (let bit = 0; bit < prefix; bit += 8) {
    const take = Math.min(8, prefix - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    const index = bit / 8;
    if (((ip.bytes[index] ?? 0) & mask) !== ((network.bytes[index] ?? 0) & mask)) return false;
  }
  return true;
}
