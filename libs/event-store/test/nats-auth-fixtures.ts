import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nkeys } from '@nats-io/nats-core';
import { startNatsServer, type NatsServerHandle } from '@dura/testing';

type KeyPair = ReturnType<typeof nkeys.createUser>;

/** A temp directory for one spec file's keys, certificates and server configs. */
export function tempDir(): { dir: string; file(name: string, content: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'dura-nats-auth-'));
  return {
    dir,
    file(name, content) {
      const path = join(dir, name);
      writeFileSync(path, content, { mode: 0o600 });
      return path;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A nats-server started with `config` as its configuration file. */
export function startConfiguredNats(configFile: string): Promise<NatsServerHandle> {
  return startNatsServer({ extraArgs: ['-c', configFile] });
}

const b64url = (data: Uint8Array | string): string => Buffer.from(data).toString('base64url');

/** A NATS JWT (v2) with `claims`, issued and signed by `issuer`, as `nsc` would write it. */
function signJwt(subject: KeyPair, issuer: KeyPair, name: string, nats: Record<string, unknown>): string {
  const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const claims = {
    jti: b64url(nkeys.createUser().getPublicKey()),
    iat: Math.floor(Date.now() / 1000),
    iss: issuer.getPublicKey(),
    name,
    sub: subject.getPublicKey(),
    nats: { ...nats, version: 2 },
  };
  const payload = b64url(JSON.stringify(claims));
  const signature = issuer.sign(new TextEncoder().encode(`${header}.${payload}`));
  return `${header}.${payload}.${b64url(signature)}`;
}

/** Operator mode: an operator, one account and one user; the server config and the user's .creds file. */
export function operatorSetup(user = 'dura-user'): { serverConfig: string; creds: string } {
  const operator = nkeys.createOperator();
  const account = nkeys.createAccount();
  // The test servers run with -js, which in operator mode needs a system account.
  const system = nkeys.createAccount();
  const userKey = nkeys.createUser();
  const operatorJwt = signJwt(operator, operator, 'dura-test-operator', { type: 'operator' });
  const unlimited = {
    subs: -1,
    data: -1,
    payload: -1,
    imports: -1,
    exports: -1,
    wildcards: true,
    conn: -1,
    leaf: -1,
  };
  const accountJwt = signJwt(account, operator, 'DURA', { type: 'account', limits: unlimited });
  const systemJwt = signJwt(system, operator, 'SYS', { type: 'account', limits: unlimited });
  const userJwt = signJwt(userKey, account, user, {
    type: 'user',
    pub: {},
    sub: {},
    subs: -1,
    data: -1,
    payload: -1,
  });
  const seed = new TextDecoder().decode(userKey.getSeed());
  return {
    serverConfig:
      `operator: ${operatorJwt}\nsystem_account: ${system.getPublicKey()}\nresolver: MEMORY\n` +
      `resolver_preload: {\n  ${account.getPublicKey()}: ${accountJwt}\n  ${system.getPublicKey()}: ${systemJwt}\n}\n`,
    creds:
      `-----BEGIN NATS USER JWT-----\n${userJwt}\n------END NATS USER JWT------\n\n` +
      `************************* IMPORTANT *************************\n` +
      `NKEY Seed printed below can be used to sign and prove identity.\n\n` +
      `-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`,
  };
}

/** A user nkey pair: the seed (for the client's file) and the public key (for the server's users list). */
export function userNkey(): { seed: string; publicKey: string } {
  const pair = nkeys.createUser();
  return { seed: new TextDecoder().decode(pair.getSeed()), publicKey: pair.getPublicKey() };
}

/** A CA, a server certificate for 127.0.0.1/localhost and a client certificate, made with openssl in `dir`. */
export function makeCertificates(
  dir: string,
  prefix = '',
): Record<'ca' | 'serverCert' | 'serverKey' | 'clientCert' | 'clientKey', string> {
  const path = (name: string) => join(dir, `${prefix}${name}`);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=dura-test-ca',
    '-keyout',
    path('ca-key.pem'),
    '-out',
    path('ca.pem'),
  );
  const sign = (name: string, subject: string, extensions: string) => {
    writeFileSync(path(`${name}.ext`), extensions);
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      subject,
      '-keyout',
      path(`${name}-key.pem`),
      '-out',
      path(`${name}.csr`),
    );
    openssl(
      'x509',
      '-req',
      '-in',
      path(`${name}.csr`),
      '-CA',
      path('ca.pem'),
      '-CAkey',
      path('ca-key.pem'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      path(`${name}.ext`),
      '-out',
      path(`${name}.pem`),
    );
  };
  sign('server', '/CN=localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  sign('client', '/CN=dura-planner', 'extendedKeyUsage=clientAuth\n');
  return {
    ca: path('ca.pem'),
    serverCert: path('server.pem'),
    serverKey: path('server-key.pem'),
    clientCert: path('client.pem'),
    clientKey: path('client-key.pem'),
  };
}
