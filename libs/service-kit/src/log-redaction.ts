/** What a redacted value is replaced with in a log line. */
export const REDACTED = '[Redacted]';

/**
 * Field names whose values never reach a log line, at any depth, compared case-insensitively with `-`, `_`
 * and `.` removed (so `Authorization`, `x-api-key`, `NATS_PASSWORD` and `natsPassword` all match). They cover
 * the NATS credentials (contracts' nats-security), the API tokens and HTTP auth headers, the secrets key
 * (DURA_SECRETS_KEY), sealed tool arguments (`$secret`) and the usual names of secret tool arguments. A bare
 * `key` is not among them: it names idempotency keys, which operators need to see.
 */
export const SECRET_FIELD_NAMES: readonly string[] = [
  'password',
  'passwd',
  'secret',
  '$secret',
  'token',
  'apiToken',
  'accessToken',
  'refreshToken',
  'idToken',
  'bearer',
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'apiKey',
  'clientSecret',
  'privateKey',
  'secretKey',
  'signingKey',
  'seed',
  'nkeySeed',
  'creds',
  'credentials',
  'NATS_PASSWORD',
  'NATS_TOKEN',
  'DURA_API_TOKEN',
  'DURA_SECRETS_KEY',
  'secretsKey',
  'cardNumber',
  'cvc',
  'cvv',
];

const normalize = (name: string): string => name.toLowerCase().replace(/[-_.]/g, '');
const SECRET_KEYS = new Set(SECRET_FIELD_NAMES.map(normalize));

/** Whether a field of this name holds a secret. */
export function isSecretFieldName(name: string): boolean {
  return SECRET_KEYS.has(normalize(name));
}

// Secrets that travel inside text: an error quoting a connection string, a header line, a creds file.
const TEXT_SECRETS: readonly [RegExp, string][] = [
  // scheme://user:password@host → scheme://user:[Redacted]@host (postgres, nats, amqp, redis, http…)
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]*@/gi, `$1${REDACTED}@`],
  // key=value text (libpq connection strings, query strings, env dumps): password=..., token: ...
  [
    /\b((?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?token)\s*[=:]\s*)('[^']*'|"[^"]*"|[^\s,;&]+)/gi,
    `$1${REDACTED}`,
  ],
  [/\b(bearer\s+)[\w.~+/-]+=*/gi, `$1${REDACTED}`],
  // nkey seeds (user, account, operator, server, cluster): S + kind + base32.
  [/\bS[UAONC][A-Z2-7]{54,}\b/g, REDACTED],
  [/-----BEGIN [A-Z ]*(?:PRIVATE KEY|SEED)-----[\s\S]*?-----END [A-Z ]*-----/g, REDACTED],
];

/** `text` with every secret it embeds (connection-string passwords, bearer tokens, seeds, keys) replaced. */
export function scrubText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of TEXT_SECRETS) out = out.replace(pattern, replacement);
  return out;
}

/** Deeper than this a value is not walked but summarized: log fields are small by design. */
const MAX_DEPTH = 12;

/**
 * A copy of `value` fit for a log line: values of secret-named fields replaced by REDACTED at any depth (up
 * to MAX_DEPTH, below which the value is elided), secrets inside strings scrubbed, errors reduced to their
 * name, message and code, and cycles cut.
 */
export function redactForLog(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Elided: too deep]';
  seen.add(value);
  try {
    if (value instanceof Error) return redactForLog(errorFields(value), depth, seen);
    if (Array.isArray(value)) return value.map((item) => redactForLog(item, depth + 1, seen));
    if (value instanceof Date) return value.toISOString();
    // Raw bytes may hold anything (a request body, a key): their size is what a log line needs.
    if (ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      out[key] = isSecretFieldName(key) && field != null ? REDACTED : redactForLog(field, depth + 1, seen);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

function errorFields(err: Error): Record<string, unknown> {
  return { name: err.name, message: err.message, ...('code' in err ? { code: err.code } : {}) };
}
