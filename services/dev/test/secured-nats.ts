import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/nats-core';
import type { NatsSecurity } from '@dura/contracts';
import { openNatsConnection } from '@dura/event-store';
import { repoRoot, startNatsServer, type NatsServerHandle } from '@dura/testing';

/** The users of the shipped permission sets (deploy/nats/permissions.conf), with test passwords. */
export const DURA_USERS = {
  planner: { permissions: 'DURA_PLANNER', inbox: '_INBOX.planner' },
  gateway: { permissions: 'DURA_GATEWAY', inbox: '_INBOX.gateway' },
  projector: { permissions: 'DURA_PROJECTOR', inbox: '_INBOX.projector' },
  client: { permissions: 'DURA_CLIENT', inbox: '_INBOX.client' },
  admin: { permissions: 'DURA_ADMIN', inbox: '_INBOX.admin' },
} as const;
export type DuraUser = keyof typeof DURA_USERS;

export const passwordOf = (user: DuraUser): string => `${user}-test-password-0f3c`;

export interface SecuredNats {
  server: NatsServerHandle;
  url: string;
  close(): Promise<void>;
}

/**
 * A nats-server whose configuration includes the shipped permissions file unchanged (copied next to it, since
 * `include` paths are relative to the including file) and defines one password user per permission set.
 * `patchPermissions` changes the copy first: for tests of what a service does when a deployment's permissions
 * lack something it needs.
 */
export async function startSecuredNats(
  options: { patchPermissions?: (permissions: string) => string } = {},
): Promise<SecuredNats> {
  const dir = mkdtempSync(join(tmpdir(), 'dura-secured-nats-'));
  const shipped = readFileSync(join(repoRoot(), 'deploy/nats/permissions.conf'), 'utf8');
  const copy = options.patchPermissions?.(shipped) ?? shipped;
  if (options.patchPermissions && copy === shipped) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error('startSecuredNats: the patch changed nothing in permissions.conf');
  }
  writeFileSync(join(dir, 'permissions.conf'), copy);
  const users = Object.entries(DURA_USERS).map(
    ([user, { permissions }]) =>
      `    { user: ${user}, password: "${passwordOf(user as DuraUser)}", permissions: $${permissions} }`,
  );
  const conf = join(dir, 'server.conf');
  writeFileSync(
    conf,
    `include ./permissions.conf\nauthorization {\n  users = [\n${users.join('\n')}\n  ]\n}\n`,
  );
  try {
    const server = await startNatsServer({ extraArgs: ['-c', conf] });
    return {
      server,
      url: server.url,
      async close() {
        await server[Symbol.asyncDispose]();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export function securityOf(user: DuraUser): NatsSecurity {
  return {
    auth: { kind: 'user', user, password: passwordOf(user) },
    inboxPrefix: DURA_USERS[user].inbox,
  };
}

/** The environment a Dura process (service, SDK, CLI) needs to connect as `user`. */
export function envOf(user: DuraUser): Record<string, string> {
  return { NATS_USER: user, NATS_PASSWORD: passwordOf(user), NATS_INBOX_PREFIX: DURA_USERS[user].inbox };
}

export function connectAs(url: string, user: DuraUser): Promise<NatsConnection> {
  return openNatsConnection({ url, name: `test-${user}`, security: securityOf(user) });
}
