// The shipped NATS configuration must be one nats-server 2.9 accepts as is: a syntax error there would only show
// when an operator starts the server. What the permissions allow and deny is proven on a running server by
// services/dev/test/nats-permissions.e2e.spec.ts.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, readRepoFile } from './repo';

const NATS_SERVER = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';
const EXAMPLE = join(ROOT, 'deploy/nats/server.example.conf');
const PASSWORDS = {
  DURA_PLANNER_NATS_PASSWORD: 'p1',
  DURA_GATEWAY_NATS_PASSWORD: 'p2',
  DURA_PROJECTOR_NATS_PASSWORD: 'p3',
  DURA_CLIENT_NATS_PASSWORD: 'p4',
  DURA_ADMIN_NATS_PASSWORD: 'p5',
};

function checkConfig(env: Record<string, string>): { status: number | null; output: string } {
  const result = spawnSync(NATS_SERVER, ['-t', '-c', EXAMPLE], {
    env: { PATH: process.env['PATH'], ...env },
  });
  return { status: result.status, output: `${String(result.stdout)}${String(result.stderr)}` };
}

describe('deploy/nats/server.example.conf with deploy/nats/permissions.conf', () => {
  it('is a valid nats-server configuration when the passwords are in the environment', () => {
    const { status, output } = checkConfig(PASSWORDS);
    expect(output).toMatch(/configuration file .*server\.example\.conf is valid/);
    expect(status).toBe(0);
  });

  it('refuses to start without a password variable, naming it', () => {
    const { DURA_GATEWAY_NATS_PASSWORD: _unset, ...rest } = PASSWORDS;
    const { status, output } = checkConfig(rest);
    expect(status).not.toBe(0);
    expect(output).toMatch(/DURA_GATEWAY_NATS_PASSWORD/);
  });

  it('defines one permission set per service, the client and the admin, and no service may destroy streams', () => {
    const permissions = readRepoFile('deploy/nats/permissions.conf');
    for (const name of ['DURA_PLANNER', 'DURA_GATEWAY', 'DURA_PROJECTOR', 'DURA_CLIENT', 'DURA_ADMIN'])
      expect(permissions).toMatch(new RegExp(`^${name} = \\{`, 'm'));
    // Each non-admin set denies deletes and purges (deny wins over allow in nats-server).
    expect(permissions.match(/"\$JS\.API\.STREAM\.PURGE\.>"/g)).toHaveLength(4);
    expect(permissions.match(/"\$JS\.API\.STREAM\.DELETE\.>"/g)).toHaveLength(4);
  });
});
