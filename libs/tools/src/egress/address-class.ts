import { inCidr, parseIp, type IpAddress } from './ip-address';

/** Why an address is not on the public internet; every kind is refused unless an allow entry names it. */
export type SpecialKind =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cloud-metadata'
  | 'shared-cgnat'
  | 'this-network'
  | 'unspecified'
  | 'multicast'
  | 'documentation'
  | 'unique-local'
  | 'reserved';

export type AddressClass =
  | { special: false }
  | {
      special: true;
      kind: SpecialKind;
      /** The range that matched, e.g. `127.0.0.0/8`, or `::ffff:0:0/96 → 127.0.0.0/8` for embedded IPv4. */
      range: string;
    };

interface Range {
  cidr: string;
  network: IpAddress;
  prefix: number;
  kind: SpecialKind;
}

function range(cidr: string, kind: SpecialKind): Range {
  const [text = '', prefix = ''] = cidr.split('/');
  const network = parseIp(text);
  if (!network) throw new Error(`bad built-in range ${cidr}`);
  return { cidr, network, prefix: Number(prefix), kind };
}

// Most specific first: the first match names the rule in the error.
const IPV4_RANGES: readonly Range[] = [
  range('169.254.169.254/32', 'cloud-metadata'),
  range('0.0.0.0/8', 'this-network'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'shared-cgnat'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'reserved'),
  range('192.0.2.0/24', 'documentation'),
  range('192.88.99.0/24', 'reserved'),
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'reserved'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
];

const IPV6_RANGES: readonly Range[] = [
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('fd00:ec2::254/128', 'cloud-metadata'),
  range('64:ff9b:1::/48', 'reserved'),
  range('100::/64', 'reserved'),
  range('2001:db8::/32', 'documentation'),
  range('3fff::/20', 'documentation'),
  range('2001::/23', 'reserved'),
  range('fc00::/7', 'unique-local'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'reserved'),
  range('ff00::/8', 'multicast'),
];

// IPv6 forms that carry an IPv4 address: they reach (or name) that IPv4 host, so they are judged as it.
const EMBEDDED_V4: readonly { cidr: string; network: IpAddress; prefix: number; at: number }[] = [
  { ...range('::ffff:0:0/96', 'reserved'), at: 12 }, // IPv4-mapped
  { ...range('::ffff:0:0:0/96', 'reserved'), at: 12 }, // IPv4-translated (SIIT)
  { ...range('64:ff9b::/96', 'reserved'), at: 12 }, // NAT64
  { ...range('::/96', 'reserved'), at: 12 }, // IPv4-compatible (deprecated)
  { ...range('2002::/16', 'reserved'), at: 2 }, // 6to4
];

const GLOBAL_UNICAST_V6 = range('2000::/3', 'reserved');

/** The IPv4 address an IPv6 address stands for (mapped, translated, NAT64, compatible, 6to4), if any. */
export function embeddedIpv4(ip: IpAddress): { v4: IpAddress; via: string } | undefined {
  if (ip.family !== 6) return undefined;
  // :: and ::1 sit inside ::/96 but are IPv6's own unspecified and loopback addresses.
  if (ip.bytes.slice(0, 15).every((b) => b === 0) && (ip.bytes[15] ?? 0) <= 1) return undefined;
  const form = EMBEDDED_V4.find((f) => inCidr(ip, f.network, f.prefix));
  if (!form) return undefined;
  return { v4: { family: 4, bytes: ip.bytes.slice(form.at, form.at + 4) }, via: form.cidr };
}

/**
 * Whether an address is on the public internet or, if not, which special range it lies in. An IPv6 address
 * that embeds an IPv4 one (e.g. `::ffff:127.0.0.1`) is classified as that IPv4 address; an IPv6 address
 * outside global unicast (2000::/3) is reserved.
 */
export function classifyAddress(ip: IpAddress): AddressClass {
  const embedded = embeddedIpv4(ip);
  if (embedded) {
    const inner = classifyAddress(embedded.v4);
    return inner.special ? { ...inner, range: `${embedded.via} → ${inner.range}` } : inner;
  }
  const ranges = ip.family === 4 ? IPV4_RANGES : IPV6_RANGES;
  const found = ranges.find((r) => inCidr(ip, r.network, r.prefix));
  if (found) return { special: true, kind: found.kind, range: found.cidr };
  if (ip.family === 6 && !inCidr(ip, GLOBAL_UNICAST_V6.network, GLOBAL_UNICAST_V6.prefix))
    return { special: true, kind: 'reserved', range: `outside ${GLOBAL_UNICAST_V6.cidr}` };
  return { special: false };
}

/** The address as the policy reasons about it: an embedded IPv4 address stands for itself. */
export function effectiveAddress(ip: IpAddress): IpAddress {
  return embeddedIpv4(ip)?.v4 ?? ip;
}
