import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyAddress, formatIp, parseIp, type IpAddress } from '../src/index';

const ip = (text: string): IpAddress => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`not an IP: ${text}`);
  return parsed;
};

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback', '127.0.0.0/8'],
    ['127.255.255.254', 'loopback', '127.0.0.0/8'],
    ['::1', 'loopback', '::1/128'],
    ['10.0.0.1', 'private', '10.0.0.0/8'],
    ['172.16.0.1', 'private', '172.16.0.0/12'],
    ['172.31.255.255', 'private', '172.16.0.0/12'],
    ['192.168.0.1', 'private', '192.168.0.0/16'],
    ['169.254.169.254', 'cloud-metadata', '169.254.169.254/32'],
    ['169.254.1.1', 'link-local', '169.254.0.0/16'],
    ['fd00:ec2::254', 'cloud-metadata', 'fd00:ec2::254/128'],
    ['fe80::1', 'link-local', 'fe80::/10'],
    ['fc00::1', 'unique-local', 'fc00::/7'],
    ['fdff:ffff::1', 'unique-local', 'fc00::/7'],
    ['100.64.0.1', 'shared-cgnat', '100.64.0.0/10'],
    ['100.127.255.255', 'shared-cgnat', '100.64.0.0/10'],
    ['0.0.0.0', 'this-network', '0.0.0.0/8'],
    ['0.1.2.3', 'this-network', '0.0.0.0/8'],
    ['::', 'unspecified', '::/128'],
    ['224.0.0.1', 'multicast', '224.0.0.0/4'],
    ['ff02::1', 'multicast', 'ff00::/8'],
    ['255.255.255.255', 'reserved', '240.0.0.0/4'],
    ['192.0.2.1', 'documentation', '192.0.2.0/24'],
    ['198.18.0.1', 'reserved', '198.18.0.0/15'],
    ['::ffff:127.0.0.1', 'loopback', '::ffff:0:0/96 → 127.0.0.0/8'],
    ['::ffff:a9fe:a9fe', 'cloud-metadata', '::ffff:0:0/96 → 169.254.169.254/32'],
    ['::127.0.0.1', 'loopback', '::/96 → 127.0.0.0/8'],
    ['::ffff:0:10.0.0.1', 'private', '::ffff:0:0:0/96 → 10.0.0.0/8'],
    ['64:ff9b::169.254.169.254', 'cloud-metadata', '64:ff9b::/96 → 169.254.169.254/32'],
    ['2002:7f00:1::', 'loopback', '2002::/16 → 127.0.0.0/8'],
    ['2001:db8::1', 'documentation', '2001:db8::/32'],
    ['3fff::1', 'documentation', '3fff::/20'],
    ['1::1', 'reserved', 'outside 2000::/3'],
    ['4000::1', 'reserved', 'outside 2000::/3'],
  ])('%s is %s (%s)', (text, kind, range) => {
    expect(classifyAddress(ip(text))).toEqual({ special: true, kind, range });
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    '%s is public',
    (text) => expect(classifyAddress(ip(text))).toEqual({ special: false }),
  );

  const v4 = fc
    .tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255))
    .map((b): IpAddress => ({ family: 4, bytes: b }));
  const mapped = (a: IpAddress): IpAddress => ({
    family: 6,
    bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, ...a.bytes],
  });
  const nat64 = (a: IpAddress): IpAddress => ({
    family: 6,
    bytes: [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, ...a.bytes],
  });

  it('an IPv4 address and its IPv4-mapped and NAT64 IPv6 forms are judged alike', () => {
    fc.assert(
      fc.property(v4, (a) => {
        const plain = classifyAddress(a);
        for (const form of [mapped(a), nat64(a)]) {
          const other = classifyAddress(form);
          expect(other.special).toBe(plain.special);
          if (plain.special && other.special) expect(other.kind).toBe(plain.kind);
        }
      }),
    );
  });

  it('every address inside a refused IPv4 range is special', () => {
    const inside = (first: number, mask: number) =>
      fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c, d]): IpAddress => ({
        family: 4,
        bytes: [first | (a & mask), b, c, d],
      }));
    const ranges = [inside(127, 0), inside(10, 0), inside(0, 0), inside(224, 15), inside(240, 15)];
    fc.assert(
      fc.property(fc.oneof(...ranges), (a) => {
        expect(classifyAddress(a).special).toBe(true);
      }),
    );
  });
});

describe('parseIp / formatIp', () => {
  it('formats IPv6 the way the WHATWG URL parser does, and parses it back to the same bytes', () => {
    fc.assert(
      fc.property(fc.ipV6(), (text) => {
        const parsed = parseIp(text);
        expect(parsed).toBeDefined();
        const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
        expect(formatIp(parsed!)).toBe(canonical);
        expect(parseIp(canonical)).toEqual(parsed);
      }),
    );
  });

  it('reads dotted-quad IPv4 only', () => {
    fc.assert(
      fc.property(fc.ipV4(), (text) => {
        expect(formatIp(parseIp(text)!)).toBe(text);
      }),
    );
    for (const text of [
      '0177.0.0.1',
      '0x7f.0.0.1',
      '2130706433',
      '127.1',
      '256.0.0.1',
      '1.2.3.4.5',
      'localhost',
    ])
      expect(parseIp(text)).toBeUndefined();
  });

  it.each(['1::2::3', ':::', '1:2:3:4:5:6:7:8:9', '12345::', '::g', '1:2:3:4:5:6:7:1.2.3.4'])(
    'rejects %s',
    (text) => expect(parseIp(text)).toBeUndefined(),
  );
});
