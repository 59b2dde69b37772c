// A nats-server configured as deploy/nats/values.yaml configures it (users from permissions.conf, included
// unchanged; TLS with a certificate of a test CA) accepts a service started with the prod overlay's environment,
// and refuses a client without credentials or without the CA.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsSecurity } from '@dura/contracts';
import { connectNats } from '@dura/service-kit';
import { spawnTsEntry, startNatsServer, type ManagedProcess, type NatsServerHandle } from '@dura/testing';
import { natsConf, natsValues, PERMISSIONS_FILE } from './nats-values';
import { containerEnv, get, mainContainer } from './pods';
import type { K8sObject } from './kustomize';
import { PROD_SECRETS } from './prod-secrets';
import { kustomize, ROOT } from './repo';

const dir = mkdtempSync(join(tmpdir(), 'dura-nats-values-'));
let server: NatsServerHandle | undefined;
let planner: ManagedProcess | undefined;

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

/** A test CA and a certificate for 127.0.0.1 signed by it: what nats-server-tls and dura-nats-tls hold. */
function makeCertificates(): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-subj',
    '/CN=dura-test-ca',
    '-days',
    '1',
  );
  openssl('req', ...ec, '-keyout', 'tls.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    'x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', 'tls.crt', '-days', '1', '-extfile', 'san.ext',
  ); // prettier-ignore
}

/** The passwords dura-nats-users holds: the ones the prod overlay's Secrets give each service. */
const PASSWORDS: Record<string, string> = {
  DURA_PLANNER_NATS_PASSWORD: PROD_SECRETS['dura-nats-planner']!.NATS_PASSWORD!,
  DURA_GATEWAY_NATS_PASSWORD: PROD_SECRETS['dura-nats-tool-gateway']!.NATS_PASSWORD!,
  DURA_WORKER_NATS_PASSWORD: PROD_SECRETS['dura-nats-worker']!.NATS_PASSWORD!,
  DURA_PROJECTOR_NATS_PASSWORD: PROD_SECRETS['dura-nats-projector']!.NATS_PASSWORD!,
  DURA_CLIENT_NATS_PASSWORD: 'client-stand-in',
  DURA_ADMIN_NATS_PASSWORD: 'admin-stand-in',
};

beforeAll(async () => {
  makeCertificates();
  // What --set-file puts next to nats.conf, unchanged.
  copyFileSync(join(ROOT, 'deploy/nats/permissions.conf'), join(dir, PERMISSIONS_FILE));
  // The chart passes the passwords in the environment; nats-server reads a config variable the same way.
  const variables = Object.entries(PASSWORDS).map(([name, value]) => `${name}: "${value}"`);
  writeFileSync(
    join(dir, 'nats.conf'),
    `${variables.join('\n')}\n${natsConf(natsValues('values.yaml'), dir)}`,
  );
  server = await startNatsServer({ extraArgs: ['-c', join(dir, 'nats.conf')] });
}, 60_000);

afterAll(async () => {
  await planner?.kill('SIGKILL');
  await server?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

const tlsUrl = () => `tls://127.0.0.1:${new URL(server!.url).port}`;

describe('a nats-server configured by deploy/nats/values.yaml', () => {
  it('accepts the planner started with the prod overlay environment (its user, TLS checked against the CA)', async () => {
    const objects = kustomize.build('overlays/prod');
    const { env, problems } = containerEnv(
      mainContainer(get<K8sObject>(objects, 'Deployment', 'planner')),
      objects,
      PROD_SECRETS,
    );
    expect(problems).toEqual([]);
    planner = spawnTsEntry({
      name: 'planner',
      entry: 'services/planner/src/main.ts',
      env: {
        ...env,
        // Where this test's server and CA are; one server, so R1; a free port for /metrics.
        NATS_URL: tlsUrl(),
        NATS_TLS_CA_FILE: join(dir, 'ca.crt'),
        DURA_STREAM_REPLICAS: '1',
        METRICS_PORT: '0',
        DURA_BIND_HOST: '127.0.0.1',
      },
    });
    await planner.waitForOutput(/planner started/, 120_000);
    expect(env.NATS_USER).toBe('planner');
  }, 180_000);

  const caFile = () => join(dir, 'ca.crt');
  const client = (security: NatsSecurity) => connectNats(tlsUrl(), 'test-client', undefined, security);
  const clientUser = {
    kind: 'user',
    user: 'client',
    password: PASSWORDS.DURA_CLIENT_NATS_PASSWORD!,
  } as const;

  it('refuses a client without credentials', async () => {
    await expect(client({ auth: { kind: 'none' }, tls: { caFile: caFile() } })).rejects.toThrow(
      /auth|Authorization/i,
    );
  });

  it('refuses a client that does not trust the server certificate (no CA given)', async () => {
    await expect(client({ auth: clientUser })).rejects.toThrow(/certificate|tls/i);
  });

  it('applies the included permissions: the client user may not subscribe to the task subjects', async () => {
    const { nc } = await client({
      auth: clientUser,
      tls: { caFile: caFile() },
      inboxPrefix: '_INBOX.client',
    });
    try {
      const sub = nc.subscribe('dura.task.>');
      // nats.js settles `closed` with the server's error rather than rejecting it.
      expect(String(await sub.closed)).toMatch(/Permissions Violation for Subscription to "dura\.task\.>"/);
    } finally {
      await nc.close();
    }
  });
});
