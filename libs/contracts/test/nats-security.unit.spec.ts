import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { describeNatsAuth, NATS_SECURITY_FIELDS, resolveNatsSecurity } from '../src/nats-security';

describe('resolveNatsSecurity', () => {
  it('with nothing set: no credentials, no TLS, the default inbox prefix', () => {
    expect(resolveNatsSecurity({})).toEqual({ ok: true, security: { auth: { kind: 'none' } } });
  });

  it('builds each authentication method from its variables', () => {
    const cases = [
      [
        { NATS_USER: 'planner', NATS_PASSWORD: 'pw' },
        { kind: 'user', user: 'planner', password: 'pw' },
      ],
      [{ NATS_TOKEN: 't0k' }, { kind: 'token', token: 't0k' }],
      [{ NATS_NKEY_SEED_FILE: '/s/seed.nk' }, { kind: 'nkey', seedFile: '/s/seed.nk' }],
      [{ NATS_CREDS_FILE: '/s/u.creds' }, { kind: 'creds', credsFile: '/s/u.creds' }],
    ] as const;
    for (const [settings, auth] of cases)
      expect(resolveNatsSecurity(settings)).toEqual({ ok: true, security: { auth } });
  });

  it('any TLS file turns TLS on; the inbox prefix is passed through', () => {
    expect(
      resolveNatsSecurity({
        NATS_TLS_CA_FILE: '/t/ca.pem',
        NATS_TLS_CERT_FILE: '/t/c.pem',
        NATS_TLS_KEY_FILE: '/t/k.pem',
        NATS_INBOX_PREFIX: '_INBOX.gateway',
      }),
    ).toEqual({
      ok: true,
      security: {
        auth: { kind: 'none' },
        tls: { caFile: '/t/ca.pem', certFile: '/t/c.pem', keyFile: '/t/k.pem' },
        inboxPrefix: '_INBOX.gateway',
      },
    });
  });

  it('refuses two methods at once, naming both, rather than preferring one silently', () => {
    const result = resolveNatsSecurity({ NATS_TOKEN: 'x', NATS_CREDS_FILE: '/u.creds' });
    expect(result).toEqual({
      ok: false,
      problems: ['set one NATS authentication method, not 2: NATS_TOKEN, NATS_CREDS_FILE'],
    });
  });

  it('refuses a user without a password (and the reverse), and a certificate without its key', () => {
    expect(resolveNatsSecurity({ NATS_USER: 'planner' })).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/NATS_USER \(planner\) is set without NATS_PASSWORD/)],
    });
    const noUser = resolveNatsSecurity({ NATS_PASSWORD: 'secret-pw' });
    expect(noUser).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/NATS_PASSWORD is set without NATS_USER/)],
    });
    expect(JSON.stringify(noUser)).not.toContain('secret-pw');
    expect(resolveNatsSecurity({ NATS_TLS_CERT_FILE: '/c.pem' })).toMatchObject({
      ok: false,
      problems: ['NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together: set both or neither'],
    });
  });

  it('the zod fields reject an inbox prefix with wildcards and keep every variable optional', () => {
    const schema = z.object(NATS_SECURITY_FIELDS);
    expect(schema.safeParse({}).success).toBe(true);
    expect(schema.safeParse({ NATS_INBOX_PREFIX: '_INBOX.>' }).success).toBe(false);
    expect(schema.safeParse({ NATS_INBOX_PREFIX: '_INBOX.planner' }).success).toBe(true);
  });
});

describe('describeNatsAuth', () => {
  it('names the identity, never the secret', () => {
    expect(describeNatsAuth({ kind: 'user', user: 'gateway', password: 'pw-123' })).toBe('user "gateway"');
    expect(describeNatsAuth({ kind: 'token', token: 'tok-123' })).not.toContain('tok-123');
    expect(describeNatsAuth({ kind: 'creds', credsFile: '/x/u.creds' })).toContain('/x/u.creds');
  });
});
