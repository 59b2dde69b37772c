import { describe, expect, it } from 'vitest';
import { DuraError } from '@dura/contracts';
import { createLogger, REDACTED, SECRET_FIELD_NAMES, withLogFields } from '../src/index';

const SECRET = 'hunter2-very-secret';

function capture(format: 'json' | 'pretty' = 'json') {
  const lines: string[] = [];
  const log = createLogger({ service: 'planner', level: 'debug', format, write: (line) => lines.push(line) });
  return { log, lines, text: () => lines.join('\n') };
}

describe('log redaction', () => {
  it.each(SECRET_FIELD_NAMES)(
    'prints the marker, never the value, for a "%s" field at every depth',
    (name) => {
      const { log, text } = capture();
      log.info('top', { [name]: SECRET });
      log.info('nested', { request: { headers: { [name]: SECRET } } });
      log.info('deep', { a: { b: [{ c: { d: { e: { [name]: { inner: SECRET } } } } }] } });
      log.child({ [name]: SECRET }).warn('child binding');
      withLogFields({ [name]: SECRET }, () => log.error('scoped field'));
      expect(text()).not.toContain(SECRET);
      expect(text().split(REDACTED).length - 1).toBe(5);
    },
  );

  it('matches header and variable spellings case-insensitively (Authorization, X-Api-Key, NATS_PASSWORD, natsPassword)', () => {
    const { log, text } = capture();
    log.info('headers', {
      headers: { Authorization: `Bearer ${SECRET}`, 'X-Api-Key': SECRET, Cookie: `sid=${SECRET}` },
      env: { NATS_PASSWORD: SECRET, natsToken: SECRET, DURA_SECRETS_KEY: `k1:${SECRET}` },
      args: { card: { $secret: { kid: 'k1', iv: 'x', ct: SECRET, tag: 'y' } } },
    });
    expect(text()).not.toContain(SECRET);
    expect(JSON.parse(text())).toMatchObject({
      headers: { Authorization: REDACTED, 'X-Api-Key': REDACTED, Cookie: REDACTED },
      env: { NATS_PASSWORD: REDACTED, natsToken: REDACTED, DURA_SECRETS_KEY: REDACTED },
      args: { card: { $secret: REDACTED } },
    });
  });

  it('scrubs a connection string embedded in an error message, in the message and in the fields', () => {
    const { log, lines } = capture();
    const url = `postgres://dura:${SECRET}@db.internal:5432/dura`;
    const err = new DuraError('database_unreachable', `cannot connect to ${url} (ECONNREFUSED)`);
    log.error(`start failed: ${err.message}`, {
      err,
      DATABASE_URL: url,
      nested: { dsn: `host=db password=${SECRET} user=dura` },
    });
    expect(lines.join('\n')).not.toContain(SECRET);
    const record = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(record['msg']).toBe(
      `start failed: cannot connect to postgres://dura:${REDACTED}@db.internal:5432/dura (ECONNREFUSED)`,
    );
    expect(record).toMatchObject({
      err: { code: 'database_unreachable', message: expect.stringContaining(`dura:${REDACTED}@db.internal`) },
      DATABASE_URL: `postgres://dura:${REDACTED}@db.internal:5432/dura`,
      nested: { dsn: `host=db password=${REDACTED} user=dura` },
    });
  });

  it('scrubs bearer tokens, nkey seeds and PEM keys inside text, in pretty format too', () => {
    const { log, text } = capture('pretty');
    const seed = `SU${'A'.repeat(56)}`;
    log.warn(`nats said: bad seed ${seed}`, {
      line: `authorization: Bearer ${SECRET}`,
      pem: `-----BEGIN PRIVATE KEY-----\n${SECRET}\n-----END PRIVATE KEY-----`,
    });
    expect(text()).not.toContain(SECRET);
    expect(text()).not.toContain(seed);
    expect(text()).toContain(`Bearer ${REDACTED}`);
  });

  it('keeps ordinary fields (idempotency keys, token counts, run ids) readable, survives cycles and logs bytes as their size', () => {
    const { log, lines } = capture();
    const cyclic: Record<string, unknown> = { runId: 'run-1' };
    cyclic['self'] = cyclic;
    log.info('call', {
      key: 'run-1:3:pay:abc',
      tokens: 42,
      inputTokens: 7,
      cyclic,
      body: Buffer.from(SECRET),
    });
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      key: 'run-1:3:pay:abc',
      tokens: 42,
      inputTokens: 7,
      cyclic: { runId: 'run-1', self: '[Circular]' },
      body: `[${SECRET.length} bytes]`,
    });
  });
});
