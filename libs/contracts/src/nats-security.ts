import * as z from 'zod';

/**
 * How a process proves who it is to NATS and how it checks the server. One set of environment variables,
 * read the same way by every service, the client SDK and the CLI. Only file *names* of secrets that live
 * in files (nkey seeds, .creds, keys) are kept here; the bytes are read at connect time by the I/O layer.
 */
export type NatsAuth =
  | { kind: 'none' }
  | { kind: 'user'; user: string; password: string }
  | { kind: 'token'; token: string }
  | { kind: 'nkey'; seedFile: string }
  | { kind: 'creds'; credsFile: string };

export interface NatsTls {
  /** PEM bundle of the CA that signed the server's certificate (else the system's CAs). */
  caFile?: string;
  /** Client certificate and key, for servers that verify clients (`verify: true`). */
  certFile?: string;
  keyFile?: string;
}

export interface NatsSecurity {
  auth: NatsAuth;
  /** Set: the connection must use TLS. */
  tls?: NatsTls;
  /** Prefix of this connection's reply subjects; per-user prefixes keep users from reading each other's replies. */
  inboxPrefix?: string;
}

const file = z.string().min(1, 'must be a file path');
// A subject prefix: tokens of printable characters without wildcards, as nats.js requires.
const inboxPrefix = z
  .string()
  .regex(/^[^\s.*>]+(\.[^\s.*>]+)*$/, 'must be a subject prefix without wildcards, e.g. _INBOX.planner');

/** The environment variables, as zod fields a service spreads into its config schema (keys are the names). */
export const NATS_SECURITY_FIELDS = {
  NATS_USER: z.string().min(1).optional().describe('NATS user name; needs NATS_PASSWORD.'),
  NATS_PASSWORD: z.string().min(1).optional().describe('Password of NATS_USER. Never logged.'),
  NATS_TOKEN: z.string().min(1).optional().describe('NATS token (instead of a user). Never logged.'),
  NATS_NKEY_SEED_FILE: file
    .optional()
    .describe('File holding the nkey seed (`SU…`) to sign the server nonce with.'),
  NATS_CREDS_FILE: file.optional().describe('JWT credentials file (`.creds`, from `nsc`) for operator mode.'),
  NATS_TLS_CA_FILE: file
    .optional()
    .describe('PEM CA bundle that verifies the server certificate; any `NATS_TLS_*` requires TLS.'),
  NATS_TLS_CERT_FILE: file.optional().describe('Client certificate (PEM), with NATS_TLS_KEY_FILE.'),
  NATS_TLS_KEY_FILE: file.optional().describe('Private key (PEM) of NATS_TLS_CERT_FILE.'),
  NATS_INBOX_PREFIX: inboxPrefix
    .optional()
    .describe('Prefix of reply subjects (default `_INBOX`); the shipped permissions give each user its own.'),
};

export type NatsSecuritySettings = {
  [K in keyof typeof NATS_SECURITY_FIELDS]?: string | undefined;
};

export type NatsSecurityResult = { ok: true; security: NatsSecurity } | { ok: false; problems: string[] };

/**
 * Turns parsed settings into one authentication method and TLS options, or says which variables conflict.
 * At most one method may be set: silently preferring one would hide a misconfiguration.
 */
export function resolveNatsSecurity(settings: NatsSecuritySettings): NatsSecurityResult {
  const problems: string[] = [];
  const methods: [string, NatsAuth][] = [];
  if (settings.NATS_USER !== undefined || settings.NATS_PASSWORD !== undefined) {
    if (settings.NATS_USER === undefined)
      problems.push('NATS_PASSWORD is set without NATS_USER: set the user name too');
    else if (settings.NATS_PASSWORD === undefined)
      problems.push(`NATS_USER (${settings.NATS_USER}) is set without NATS_PASSWORD: set the password too`);
    else
      methods.push([
        'NATS_USER',
        { kind: 'user', user: settings.NATS_USER, password: settings.NATS_PASSWORD },
      ]);
  }
  if (settings.NATS_TOKEN !== undefined)
    methods.push(['NATS_TOKEN', { kind: 'token', token: settings.NATS_TOKEN }]);
  if (settings.NATS_NKEY_SEED_FILE !== undefined)
    methods.push(['NATS_NKEY_SEED_FILE', { kind: 'nkey', seedFile: settings.NATS_NKEY_SEED_FILE }]);
  if (settings.NATS_CREDS_FILE !== undefined)
    methods.push(['NATS_CREDS_FILE', { kind: 'creds', credsFile: settings.NATS_CREDS_FILE }]);
  if (methods.length > 1)
    problems.push(
      `set one NATS authentication method, not ${methods.length}: ${methods.map(([name]) => name).join(', ')}`,
    );
  const certFile = settings.NATS_TLS_CERT_FILE;
  const keyFile = settings.NATS_TLS_KEY_FILE;
  if ((certFile === undefined) !== (keyFile === undefined))
    problems.push('NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE go together: set both or neither');
  if (problems.length > 0) return { ok: false, problems };

  const security: NatsSecurity = { auth: methods[0]?.[1] ?? { kind: 'none' } };
  if (settings.NATS_TLS_CA_FILE !== undefined || certFile !== undefined) {
    security.tls = {
      ...(settings.NATS_TLS_CA_FILE === undefined ? {} : { caFile: settings.NATS_TLS_CA_FILE }),
      ...(certFile === undefined ? {} : { certFile }),
      ...(keyFile === undefined ? {} : { keyFile }),
    };
  }
  if (settings.NATS_INBOX_PREFIX !== undefined) security.inboxPrefix = settings.NATS_INBOX_PREFIX;
  return { ok: true, security };
}

/** Who this connection claims to be, for messages and logs: never the secret itself. */
export function describeNatsAuth(auth: NatsAuth): string {
  switch (auth.kind) {
    case 'none':
      return 'no credentials';
    case 'user':
      return `user "${auth.user}"`;
    case 'token':
      return 'a token (NATS_TOKEN)';
    case 'nkey':
      return `the nkey seed in ${auth.seedFile}`;
    case 'creds':
      return `the credentials file ${auth.credsFile}`;
  }
}
