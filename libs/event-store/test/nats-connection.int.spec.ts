import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/nats-core';
import type { DuraError, NatsSecurity } from '@dura/contracts';
import type { NatsServerHandle } from '@dura/testing';
import { openNatsConnection } from '../src/nats-connection';
import {
  makeCertificates,
  operatorSetup,
  startConfiguredNats,
  tempDir,
  userNkey,
} from './nats-auth-fixtures';

const temp = tempDir();
const servers: Record<'users' | 'token' | 'operator' | 'tls', NatsServerHandle | undefined> = {
  users: undefined,
  token: undefined,
  operator: undefined,
  tls: undefined,
};
const open: NatsConnection[] = [];
const nkey = userNkey();
const operator = operatorSetup('dura-planner');
let certs: ReturnType<typeof makeCertificates>;
let otherCa: string;

const url = (name: keyof typeof servers): string => {
  const server = servers[name];
  if (!server) throw new Error(`the ${name} server did not start; see the beforeAll error`);
  return server.url;
};

async function connectWith(name: keyof typeof servers, security: NatsSecurity): Promise<NatsConnection> {
  const nc = await openNatsConnection({
    url: url(name),
    name: 'auth-test',
    security,
    connect: { timeout: 3000 },
  });
  open.push(nc);
  return nc;
}

async function failure(name: keyof typeof servers, security: NatsSecurity): Promise<DuraError> {
  const result = await connectWith(name, security).then(
    () => undefined,
    (err: unknown) => err as DuraError,
  );
  expect(result, 'the connection was accepted').toBeDefined();
  return result as DuraError;
}

/** A round trip through the server proves the connection is really usable. */
async function roundTrip(nc: NatsConnection): Promise<string> {
  const sub = nc.subscribe('auth.echo', { max: 1, callback: (_err, msg) => void msg.respond(msg.data) });
  const reply = await nc.request('auth.echo', 'ping', { timeout: 2000 });
  sub.unsubscribe();
  return reply.string();
}

beforeAll(async () => {
  certs = makeCertificates(temp.dir);
  otherCa = makeCertificates(temp.dir, 'other-').ca;
  const [users, token, op, tls] = await Promise.allSettled([
    startConfiguredNats(
      temp.file(
        'users.conf',
        `authorization {\n  users = [\n    { user: planner, password: "pw-7a1" }\n    { nkey: ${nkey.publicKey} }\n  ]\n}\n`,
      ),
    ),
    startConfiguredNats(temp.file('token.conf', 'authorization {\n  token: "tok-3b9"\n}\n')),
    startConfiguredNats(temp.file('operator.conf', operator.serverConfig)),
    startConfiguredNats(
      temp.file(
        'tls.conf',
        `tls {\n  cert_file: "${certs.serverCert}"\n  key_file: "${certs.serverKey}"\n  ca_file: "${certs.ca}"\n  verify: true\n}\n`,
      ),
    ),
  ]);
  for (const [key, result] of Object.entries({ users, token, operator: op, tls })) {
    if (result.status === 'fulfilled') servers[key as keyof typeof servers] = result.value;
  }
  for (const result of [users, token, op, tls]) if (result.status === 'rejected') throw result.reason;
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(open.map((nc) => nc.close()));
  await Promise.allSettled(
    Object.values(servers).flatMap((server) => (server ? [server[Symbol.asyncDispose]()] : [])),
  );
  temp.remove();
});

describe('authentication methods against a real nats-server', () => {
  it('user and password', async () => {
    const nc = await connectWith('users', { auth: { kind: 'user', user: 'planner', password: 'pw-7a1' } });
    expect(await roundTrip(nc)).toBe('ping');
  });

  it('a wrong password: nats_auth_failed naming the user, never the password', async () => {
    const err = await failure('users', { auth: { kind: 'user', user: 'planner', password: 'wrong-5e2' } });
    expect(err.code).toBe('nats_auth_failed');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(
      /rejected user "planner" \(Authorization Violation\): check NATS_USER and NATS_PASSWORD/,
    );
    expect(err.message).not.toContain('wrong-5e2');
  });

  it('no credentials on a server that wants them: says which variables to set', async () => {
    const err = await failure('users', { auth: { kind: 'none' } });
    expect(err.code).toBe('nats_auth_failed');
    expect(err.message).toMatch(
      /set NATS_USER and NATS_PASSWORD, NATS_TOKEN, NATS_NKEY_SEED_FILE or NATS_CREDS_FILE/,
    );
  });

  it('token', async () => {
    const nc = await connectWith('token', { auth: { kind: 'token', token: 'tok-3b9' } });
    expect(await roundTrip(nc)).toBe('ping');
    const err = await failure('token', { auth: { kind: 'token', token: 'tok-wrong' } });
    expect(err.message).toMatch(/rejected a token \(NATS_TOKEN\)/);
    expect(err.message).not.toContain('tok-wrong');
  });

  it('nkey seed file', async () => {
    const seedFile = temp.file('planner.nk', `${nkey.seed}\n`);
    const nc = await connectWith('users', { auth: { kind: 'nkey', seedFile } });
    expect(await roundTrip(nc)).toBe('ping');
  });

  it('an nkey the server does not know: nats_auth_failed naming the seed file', async () => {
    const seedFile = temp.file('stranger.nk', userNkey().seed);
    const err = await failure('users', { auth: { kind: 'nkey', seedFile } });
    expect(err.code).toBe('nats_auth_failed');
    expect(err.message).toContain(`the nkey seed in ${seedFile}`);
  });

  it('a seed file that is missing or not a seed: the file is named, its content is not', async () => {
    const missing = `${temp.dir}/nope.nk`;
    const absent = await failure('users', { auth: { kind: 'nkey', seedFile: missing } });
    expect(absent.code).toBe('nats_credentials_unreadable');
    expect(absent.message).toBe(
      `NATS_NKEY_SEED_FILE=${missing}: the file does not exist; fix the path or the file's permissions`,
    );
    const garbage = temp.file('garbage.nk', 'SUsecret-but-not-a-seed');
    const invalid = await failure('users', { auth: { kind: 'nkey', seedFile: garbage } });
    expect(invalid.code).toBe('nats_credentials_invalid');
    expect(invalid.message).toContain(garbage);
    expect(invalid.message).not.toContain('secret-but-not-a-seed');
  });

  it('JWT credentials file (.creds) in operator mode', async () => {
    const credsFile = temp.file('planner.creds', operator.creds);
    const nc = await connectWith('operator', { auth: { kind: 'creds', credsFile } });
    expect(await roundTrip(nc)).toBe('ping');
  });

  it('a .creds file of another operator, a bad one and a missing one: each names the file', async () => {
    const foreign = temp.file('foreign.creds', operatorSetup('stranger').creds);
    const rejected = await failure('operator', { auth: { kind: 'creds', credsFile: foreign } });
    expect(rejected.code).toBe('nats_auth_failed');
    expect(rejected.message).toContain(`the credentials file ${foreign}`);
    expect(rejected.message).toMatch(/nsc describe user/);
    const bad = temp.file('bad.creds', 'not a creds file');
    const invalid = await failure('operator', { auth: { kind: 'creds', credsFile: bad } });
    expect(invalid.code).toBe('nats_credentials_invalid');
    expect(invalid.message).toMatch(new RegExp(`^NATS_CREDS_FILE=${bad}: not a NATS credentials file`));
    const missing = await failure('operator', {
      auth: { kind: 'creds', credsFile: `${temp.dir}/none.creds` },
    });
    expect(missing.code).toBe('nats_credentials_unreadable');
    expect(missing.message).toContain(`${temp.dir}/none.creds`);
  });
});

describe('TLS: the server verified by a CA, the client by its certificate', () => {
  const tls = () => ({ caFile: certs.ca, certFile: certs.clientCert, keyFile: certs.clientKey });

  it('connects with the CA and a client certificate', async () => {
    const nc = await connectWith('tls', { auth: { kind: 'none' }, tls: tls() });
    expect(nc.info?.tls_required).toBe(true);
    expect(await roundTrip(nc)).toBe('ping');
  });

  it('a server certificate from another CA is refused: nats_tls_failed, saying what to check', async () => {
    const err = await failure('tls', { auth: { kind: 'none' }, tls: { ...tls(), caFile: otherCa } });
    expect(err.code).toBe('nats_tls_failed');
    expect(err.message).toMatch(/NATS_TLS_CA_FILE holds the CA that signed the server's certificate/);
  });

  it('without a client certificate the server refuses the connection', async () => {
    const err = await failure('tls', { auth: { kind: 'none' }, tls: { caFile: certs.ca } });
    expect(['nats_tls_failed', 'nats_unreachable']).toContain(err.code);
    expect(err.message).toMatch(/NATS at nats:\/\/127\.0\.0\.1|cannot connect to NATS/);
  });

  it('a key file that is not PEM is named', async () => {
    const key = temp.file('key.txt', 'hello');
    const err = await failure('tls', { auth: { kind: 'none' }, tls: { ...tls(), keyFile: key } });
    expect(err.code).toBe('nats_credentials_invalid');
    expect(err.message).toBe(`NATS_TLS_KEY_FILE=${key}: not a PEM private key file`);
  });
});
