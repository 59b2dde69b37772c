// Issue acceptance (egress): http.request under the egress policy. A witness server on every loopback form
// counts the requests it receives; each refused target must fail with egress_denied and leave it at 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHttpRequestTool,
  parseAllowList,
  systemResolver,
  ToolError,
  type EgressPolicy,
  type Resolver,
} from '../src/index';
import { startTarget, startWitness, type TestServer } from './egress-servers';

const SECRET = 'witness-secret-9d2c';
let witness: TestServer;
let target: TestServer;

beforeAll(async () => {
  [witness, target] = await Promise.all([startWitness(SECRET), startTarget()]);
});
afterAll(async () => {
  await Promise.all([witness?.close(), target?.close()]);
});

const ctx = (key = 'run-1:1:http.request:k') => ({
  idempotencyKey: key,
  runId: 'run-1',
  callId: 'call-1',
  attempt: 1,
  signal: AbortSignal.timeout(20_000),
});

// Names only tests know: one resolves to loopback, one to a public and a loopback address at once.
const resolver: Resolver & { calls: string[] } = Object.assign(
  async (host: string) => {
    resolver.calls.push(host);
    if (host === 'metadata.rebind.test') return ['127.0.0.1'];
    if (host === 'mixed.rebind.test') return ['93.184.216.34', '127.0.0.1'];
    if (host === 'pinned.test') return ['127.0.0.1'];
    return systemResolver(host);
  },
  { calls: [] as string[] },
);

function tool(allow: string, overrides: Partial<EgressPolicy> = {}) {
  const { entries, problems } = parseAllowList(allow);
  expect(problems).toEqual([]);
  return createHttpRequestTool({
    policy: { entries, maxRedirects: 0, maxResponseBytes: 1_048_576, ...overrides },
    resolve: resolver,
  });
}

async function call(allow: string, url: string, overrides: Partial<EgressPolicy> = {}, timeoutMs?: number) {
  const http = tool(allow, overrides);
  const args = http.input.parse({ url, ...(timeoutMs ? { timeoutMs } : {}) });
  return http.execute(args, ctx());
}

async function refusal(
  allow: string,
  url: string,
  overrides: Partial<EgressPolicy> = {},
): Promise<ToolError> {
  const error = await call(allow, url, overrides).then(
    (result) => new Error(`expected egress_denied, got ${JSON.stringify(result)}`),
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ToolError);
  expect(error).toMatchObject({ code: 'egress_denied', retryable: false });
  expect((error as ToolError).message).not.toContain(SECRET);
  return error as ToolError;
}

describe('http.request refuses non-public targets by default', () => {
  it.each([
    [
      'loopback',
      () => `http://127.0.0.1:${witness.port}/latest/meta-data`,
      /127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)/,
    ],
    ['loopback, another address of 127/8', () => `http://127.9.9.9:${witness.port}/`, /loopback/],
    ['IPv6 loopback ::1', () => `http://[::1]:${witness.port}/`, /::1 is a loopback address \(::1\/128\)/],
    [
      'IPv4-mapped loopback',
      () => `http://[::ffff:127.0.0.1]:${witness.port}/`,
      /::ffff:0:0\/96 → 127\.0\.0\.0\/8/,
    ],
    ['10/8', () => `http://10.0.0.1:${witness.port}/`, /private address \(10\.0\.0\.0\/8\)/],
    ['192.168/16', () => 'http://192.168.1.1/', /private address \(192\.168\.0\.0\/16\)/],
    [
      'cloud metadata 169.254.169.254',
      () => 'http://169.254.169.254/latest/meta-data/',
      /cloud-metadata address \(169\.254\.169\.254\/32\)/,
    ],
    ['AWS IPv6 metadata', () => 'http://[fd00:ec2::254]/latest/meta-data/', /cloud-metadata/],
    ['0.0.0.0', () => `http://0.0.0.0:${witness.port}/`, /this-network address \(0\.0\.0\.0\/8\)/],
    [
      'an integer IPv4 form of loopback',
      () => `http://2130706433:${witness.port}/`,
      /127\.0\.0\.1 is a loopback/,
    ],
    [
      'localhost',
      () => `http://localhost:${witness.port}/`,
      /localhost resolved to (127\.0\.0\.1|::1), which is a loopback address/,
    ],
    [
      'a name an injected resolver maps to 127.0.0.1',
      () => `http://metadata.rebind.test:${witness.port}/`,
      /metadata\.rebind\.test resolved to 127\.0\.0\.1, which is a loopback/,
    ],
    [
      'a name resolving to a public and a loopback address',
      () => `http://mixed.rebind.test:${witness.port}/`,
      /resolved to 127\.0\.0\.1/,
    ],
  ])('%s: egress_denied, naming the address, the rule and the setting', async (_name, url, says) => {
    const error = await refusal('', url());
    expect(error.message).toMatch(says);
    expect(error.message).toContain('DURA_EGRESS_ALLOW');
    expect(witness.requests).toEqual([]);
  });

  it('refuses other schemes (file:) before resolving anything', async () => {
    const error = await refusal('', 'file:///etc/passwd');
    expect(error.message).toMatch(/only http: and https: URLs/);
  });

  it('with an allow list, refuses a public address no entry names', async () => {
    const error = await refusal(`127.0.0.1:${target.port}`, 'http://93.184.216.34/');
    expect(error.message).toMatch(/matches no entry of DURA_EGRESS_ALLOW/);
    expect(error.message).toContain('"93.184.216.34:80"');
  });

  it('a host-name entry does not unlock the loopback address the name resolves to', async () => {
    const error = await refusal(`metadata.rebind.test`, `http://metadata.rebind.test:${witness.port}/`);
    expect(error.message).toMatch(/loopback/);
    expect(witness.requests).toEqual([]);
  });
});

describe('redirects', () => {
  const redirect = (to: string, status = 302) =>
    `http://127.0.0.1:${target.port}/redirect?to=${encodeURIComponent(to)}&status=${status}`;

  it('are not followed by default: the redirect is the result, and its target is never asked', async () => {
    const result = await call(`127.0.0.1:${target.port}`, redirect(`http://127.0.0.1:${witness.port}/`));
    expect(result).toEqual({ status: 302, body: 'moved', location: `http://127.0.0.1:${witness.port}/` });
    expect(witness.requests).toEqual([]);
  });

  it.each([
    ['loopback', () => `http://127.0.0.1:${witness.port}/`],
    ['::1', () => `http://[::1]:${witness.port}/`],
    ['localhost', () => `http://localhost:${witness.port}/`],
    ['a name resolving to loopback', () => `http://metadata.rebind.test:${witness.port}/`],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/'],
    ['10/8', () => 'http://10.1.2.3/'],
  ])(
    'from the one allowed host:port to %s: egress_denied on the hop, 0 requests reach the witness',
    async (_name, to) => {
      for (const status of [301, 302, 303, 307, 308]) {
        const error = await refusal(`127.0.0.1:${target.port}`, redirect(to(), status), { maxRedirects: 5 });
        expect(error.message).not.toContain('moved');
      }
      expect(witness.requests).toEqual([]);
    },
  );

  it('to an allowed target are followed when enabled, each hop counted', async () => {
    const result = await call(`127.0.0.1:${target.port}`, redirect(redirect('/ok')), { maxRedirects: 2 });
    expect(result).toEqual({ status: 200, body: { reached: 'allowed' } });
    await expect(
      call(`127.0.0.1:${target.port}`, redirect(redirect('/ok')), { maxRedirects: 1 }),
    ).rejects.toMatchObject({ code: 'http_too_many_redirects', retryable: false });
  });
});

describe('what is allowed', () => {
  it('an explicitly allowed host:port still works, and the name is resolved once and pinned', async () => {
    const before = target.requests.length;
    expect(await call(`127.0.0.1:${target.port}`, `http://127.0.0.1:${target.port}/ok`)).toEqual({
      status: 200,
      body: { reached: 'allowed' },
    });
    resolver.calls.length = 0;
    // pinned.test exists only in the injected resolver: the socket can only have used the checked address.
    expect(await call(`127.0.0.1:${target.port}`, `http://pinned.test:${target.port}/ok`)).toEqual({
      status: 200,
      body: { reached: 'allowed' },
    });
    expect(resolver.calls).toEqual(['pinned.test']);
    expect(target.requests.slice(before)).toEqual(['GET /ok', 'GET /ok']);
  });

  it('the allowed port only: the same address on the witness port is refused', async () => {
    await refusal(`127.0.0.1:${target.port}`, `http://127.0.0.1:${witness.port}/`);
    expect(witness.requests).toEqual([]);
  });

  it('caps the response body, streamed or declared, and keeps nothing of it', async () => {
    const allow = `127.0.0.1:${target.port}`;
    const cap = { maxResponseBytes: 65_536 };
    for (const declared of ['', '&declared=1'])
      await expect(
        call(allow, `http://127.0.0.1:${target.port}/big?bytes=2000000${declared}`, cap),
      ).rejects.toMatchObject({
        code: 'http_response_too_large',
        retryable: false,
        message: expect.stringMatching(/cap of 65536 bytes \(DURA_EGRESS_MAX_RESPONSE_BYTES\)/) as unknown,
      });
    const fits = await call(allow, `http://127.0.0.1:${target.port}/big?bytes=65536`, cap);
    expect(fits).toMatchObject({ status: 200 });
  });

  it('gives up on a target that never finishes within the call timeout', async () => {
    const started = Date.now();
    await expect(
      call(`127.0.0.1:${target.port}`, `http://127.0.0.1:${target.port}/slow`, {}, 500),
    ).rejects.toMatchObject({ code: 'http_unreachable', retryable: true });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('the witness received no request at all', () => {
    expect(witness.requests).toEqual([]);
  });

  // Last, since it reaches the witness: proves the witness counts, and that an IP entry unlocks loopback.
  it('control: an entry naming the witness address and port lets a request reach it', async () => {
    const result = await call(`127.0.0.1:${witness.port}`, `http://127.0.0.1:${witness.port}/control`);
    expect(result).toEqual({ status: 200, body: SECRET });
    expect(witness.requests).toEqual(['GET /control']);
  });
});
