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
  DURA_WORKER_NATS_PASSWORD: 'p6',
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
    for (const name of [
      'DURA_PLANNER',
      'DURA_GATEWAY',
      'DURA_WORKER',
      'DURA_PROJECTOR',
      'DURA_CLIENT',
      'DURA_ADMIN',
    ])
      expect(permissions).toMatch(new RegExp(`^${name} = \\{`, 'm'));
    // Each non-admin set denies deletes and purges (deny wins over allow in nats-server).
    expect(permissions.match(/"\$JS\.API\.STREAM\.PURGE\.>"/g)).toHaveLength(5);
    expect(permissions.match(/"\$JS\.API\.STREAM\.DELETE\.>"/g)).toHaveLength(5);
  });
});

/** The quoted subjects of one list (`allow = [...]`/`deny = [...]`) of a permission set's publish or subscribe. */
function listOf(set: string, direction: 'publish' | 'subscribe', list: 'allow' | 'deny'): string[] {
  const permissions = readRepoFile('deploy/nats/permissions.conf');
  const block = new RegExp(`^${set} = \\{([\\s\\S]*?)^\\}`, 'm').exec(permissions)?.[1] ?? '';
  const part = block.slice(block.indexOf(`${direction} = {`));
  const found = new RegExp(`${list} = \\[([^\\]]*)\\]`).exec(part)?.[1] ?? '';
  return [...found.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
}

describe('the live model text stream DURA_TOKENS in permissions.conf', () => {
  it('only the deciders (planner, worker) may publish the text or change the stream; the others are denied both', () => {
    for (const set of ['DURA_PLANNER', 'DURA_WORKER']) {
      expect(listOf(set, 'publish', 'allow')).toEqual(
        expect.arrayContaining([
          'dura.tokens.*',
          '$JS.API.STREAM.CREATE.DURA_TOKENS',
          '$JS.API.STREAM.UPDATE.DURA_TOKENS',
        ]),
      );
      expect(listOf(set, 'publish', 'deny')).toContain('$JS.API.STREAM.MSG.DELETE.DURA_TOKENS');
    }
    for (const set of ['DURA_GATEWAY', 'DURA_PROJECTOR', 'DURA_CLIENT']) {
      const allow = listOf(set, 'publish', 'allow');
      expect(allow.filter((s) => s.startsWith('dura.tokens'))).toEqual([]);
      expect(allow).not.toContain('$JS.API.STREAM.UPDATE.DURA_TOKENS');
      expect(listOf(set, 'publish', 'deny')).toEqual(expect.arrayContaining(['dura.tokens.>']));
    }
  });

  it('readers read it by message get and are woken by its subject, with no consumer and no core live subject', () => {
    for (const set of ['DURA_PROJECTOR', 'DURA_CLIENT']) {
      expect(listOf(set, 'publish', 'allow')).toEqual(
        expect.arrayContaining(['$JS.API.DIRECT.GET.DURA_TOKENS', '$JS.API.STREAM.MSG.GET.DURA_TOKENS']),
      );
      expect(
        listOf(set, 'publish', 'allow').filter((s) => s.includes('CONSUMER') && s.includes('DURA_TOKENS')),
      ).toEqual([]);
      expect(listOf(set, 'subscribe', 'allow')).toContain('dura.tokens.*');
    }
    expect(readRepoFile('deploy/nats/permissions.conf')).not.toContain('.live"');
  });
});
