// The production NATS values fail closed (users with least-privilege permissions, TLS, passwords from a required
// Secret); the dev values stay open and say so. A server started from them: nats-values.int.spec.ts.
import { describe, expect, it } from 'vitest';
import { natsConf, natsValues, PERMISSIONS_FILE } from './nats-values';
import { readRepoFile } from './repo';

const permissionSets = [...readRepoFile('deploy/nats/permissions.conf').matchAll(/^(DURA_\w+) = \{/gm)].map(
  (m) => m[1]!,
);

describe('deploy/nats/values.yaml (production)', () => {
  const values = natsValues('values.yaml');
  const users = (values.config.merge?.authorization as { users: Record<string, string>[] }).users;

  it('defines one user per permission set of permissions.conf, included unchanged, and no anonymous user', () => {
    expect(permissionSets).toEqual([
      'DURA_PLANNER',
      'DURA_GATEWAY',
      'DURA_WORKER',
      'DURA_PROJECTOR',
      'DURA_CLIENT',
      'DURA_ADMIN',
    ]);
    expect(values.config.merge?.['$include']).toBe(PERMISSIONS_FILE);
    expect(users.map((u) => u.permissions).sort()).toEqual(
      permissionSets.map((set) => `<< $${set} >>`).sort(),
    );
    expect(users.map((u) => u.user)).toEqual([
      'planner',
      'gateway',
      'worker',
      'projector',
      'client',
      'admin',
    ]);
    expect(JSON.stringify(values.config.merge)).not.toMatch(/no_auth_user/);
    // The install command passes the file itself, so the permissions cannot drift from the shipped ones.
    expect(readRepoFile('deploy/nats/values.yaml')).toContain(
      `--set-file 'configMap.merge.data.${PERMISSIONS_FILE.replace('.', '\\.')}=deploy/nats/permissions.conf'`,
    );
  });

  it('takes every password from the required Secret dura-nats-users, never from the file', () => {
    for (const user of users) {
      const variable = /^<< \$(\w+) >>$/.exec(user.password ?? '')?.[1] ?? '';
      expect(variable, user.user).toBe(`DURA_${user.user?.toUpperCase()}_NATS_PASSWORD`);
      const env = values.container?.env?.[variable];
      expect(typeof env === 'object' ? env.valueFrom?.secretKeyRef : undefined, variable).toEqual({
        name: 'dura-nats-users',
        key: user.user,
      });
    }
  });

  it('serves clients over TLS only, and writes the users, the include and TLS into the server configuration', () => {
    expect(values.config.nats?.tls).toEqual({ enabled: true, secretName: 'nats-server-tls' });
    const conf = natsConf(values, '/etc/nats-certs/nats');
    expect(conf.indexOf(`include ./${PERMISSIONS_FILE}`)).toBeLessThan(conf.indexOf('authorization'));
    expect(conf).toContain('password: $DURA_PLANNER_NATS_PASSWORD');
    expect(conf).toContain('permissions: $DURA_PLANNER');
    expect(conf).toContain('cert_file: "/etc/nats-certs/nats/tls.crt"');
  });
});

describe('deploy/nats/values-dev.yaml', () => {
  it('is open (no users, no TLS) for convenience, and says so', () => {
    const values = natsValues('values-dev.yaml');
    expect(values.config.merge).toBeUndefined();
    expect(values.config.nats?.tls).toBeUndefined();
    expect(readRepoFile('deploy/nats/values-dev.yaml')).toMatch(/Open on purpose/);
  });
});
