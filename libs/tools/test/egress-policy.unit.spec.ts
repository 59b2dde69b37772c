import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertEgressAllowed, EgressDenied, parseAllowEntry, parseAllowList, parseIp } from '../src/index';

describe('DURA_EGRESS_ALLOW entries', () => {
  it.each([
    ['public', { kind: 'public', port: undefined }],
    ['public:443', { kind: 'public', port: 443 }],
    ['API.Example.com', { kind: 'host', host: 'api.example.com', port: undefined }],
    ['api.example.com.:8443', { kind: 'host', host: 'api.example.com', port: 8443 }],
    ['*.example.com:443', { kind: 'suffix', suffix: 'example.com', port: 443 }],
    ['10.0.0.0/8', { kind: 'cidr', prefix: 8, port: undefined }],
    ['127.0.0.1:8080', { kind: 'cidr', prefix: 32, port: 8080 }],
    ['[::1]:8080', { kind: 'cidr', prefix: 128, port: 8080 }],
    ['::1', { kind: 'cidr', prefix: 128, port: undefined }],
    ['fc00::/7', { kind: 'cidr', prefix: 7, port: undefined }],
    ['[fc00::/7]:443', { kind: 'cidr', prefix: 7, port: 443 }],
  ])('%s', (text, expected) => {
    expect(parseAllowEntry(text)).toMatchObject(expected);
  });

  it.each([
    ['10.1.2.3/8', /host bits are set; the network is 10\.0\.0\.0\/8/],
    ['10.0.0.0/33', /prefix "\/33" must be 0 to 32/],
    ['example.com:0', /port "0" must be a number from 1 to 65535/],
    ['example.com:99999', /port/],
    ['[::1', /"\[" without "\]"/],
    ['[example.com]:80', /brackets are for IPv6/],
    ['*.com', /"\*\." must be followed by a domain of two labels or more/],
    ['exa mple.com', /not a host name/],
    ['0177.0.0.1', /not a host name, IP address or CIDR/],
    ['300.1.1.1', /not a host name/],
  ])('refuses %s, saying why', (text, says) => {
    const parsed = parseAllowEntry(text);
    expect(typeof parsed).toBe('string');
    expect(parsed).toMatch(says);
  });

  it('lists every bad entry of a list and keeps the good ones', () => {
    const { entries, problems } = parseAllowList(' api.example.com , ,10.0.0.0/33, [::1]:80,bad host');
    expect(entries.map((e) => e.text)).toEqual(['api.example.com', '[::1]:80']);
    expect(problems).toHaveLength(2);
  });

  it('an IP and port always parse to that single address and port', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.integer({ min: 1, max: 65535 }), (ip, port) => {
        expect(parseAllowEntry(`${ip}:${port}`)).toMatchObject({
          kind: 'cidr',
          prefix: 32,
          port,
          network: parseIp(ip),
        });
      }),
    );
    fc.assert(
      fc.property(fc.ipV6(), fc.integer({ min: 1, max: 65535 }), (ip, port) => {
        expect(parseAllowEntry(`[${ip}]:${port}`)).toMatchObject({ kind: 'cidr', prefix: 128, port });
      }),
    );
  });
});

describe('assertEgressAllowed', () => {
  const policy = (allow: string) => ({
    entries: parseAllowList(allow).entries,
    maxRedirects: 0,
    maxResponseBytes: 1,
  });
  const target = (host: string, port: number, ...addresses: string[]) => ({
    url: `http://${host}:${port}/`,
    host,
    port,
    addresses: (addresses.length ? addresses : [host]).map((a) => parseIp(a)!),
  });
  const verdict = (allow: string, t: ReturnType<typeof target>) => {
    try {
      assertEgressAllowed(policy(allow), t);
      return 'allowed';
    } catch (err) {
      expect(err).toBeInstanceOf(EgressDenied);
      return (err as EgressDenied).rule;
    }
  };

  it.each([
    ['', target('93.184.216.34', 443), 'allowed'],
    ['', target('api.example.com', 443, '93.184.216.34'), 'allowed'],
    ['', target('127.0.0.1', 80), 'loopback 127.0.0.0/8'],
    ['', target('metadata.google.internal', 80, '169.254.169.254'), 'cloud-metadata 169.254.169.254/32'],
    ['127.0.0.1:8080', target('127.0.0.1', 8080), 'allowed'],
    ['127.0.0.1:8080', target('127.0.0.1', 8081), 'loopback 127.0.0.0/8'],
    ['127.0.0.1', target('::ffff:127.0.0.1', 80), 'allowed'],
    ['127.0.0.1:8080', target('127.0.0.1', 8080, '127.0.0.1', '::1'), 'loopback ::1/128'],
    ['10.0.0.0/8', target('db.internal', 5432, '10.2.3.4'), 'allowed'],
    ['db.internal', target('db.internal', 5432, '10.2.3.4'), 'private 10.0.0.0/8'],
    ['public', target('169.254.169.254', 80), 'cloud-metadata 169.254.169.254/32'],
    ['api.example.com', target('api.example.com', 443, '93.184.216.34'), 'allowed'],
    ['api.example.com', target('other.example.com', 443, '93.184.216.34'), 'not in DURA_EGRESS_ALLOW'],
    ['*.example.com:443', target('a.b.example.com', 443, '93.184.216.34'), 'allowed'],
    ['*.example.com:443', target('example.com', 443, '93.184.216.34'), 'not in DURA_EGRESS_ALLOW'],
    ['*.example.com:443', target('a.example.com', 80, '93.184.216.34'), 'not in DURA_EGRESS_ALLOW'],
    ['public:443', target('8.8.8.8', 443), 'allowed'],
    ['public:443', target('8.8.8.8', 80), 'not in DURA_EGRESS_ALLOW'],
  ])('allow "%s", %o: %s', (allow, t, expected) => {
    expect(verdict(allow, t)).toBe(expected);
  });

  it('never allows a loopback address unless an IP or CIDR entry contains it', () => {
    const hostEntries = fc.constantFrom(
      'public',
      'localhost',
      '*.example.com',
      'api.example.com:80',
      '93.184.216.0/24',
    );
    fc.assert(
      fc.property(
        fc.array(hostEntries),
        fc.nat(255),
        fc.integer({ min: 1, max: 65535 }),
        (allow, last, port) => {
          const t = target('localhost', port, `127.0.0.${last}`);
          expect(verdict(allow.join(','), t)).toBe('loopback 127.0.0.0/8');
        },
      ),
    );
  });
});
