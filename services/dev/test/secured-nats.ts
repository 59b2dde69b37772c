import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { NatsConnection } from '@nats-io/nats-core';
import type { NatsSecurity } from '@dura/contracts';
import { openNatsConnection } from '@dura/event-store';
import {
  freePort,
  repoRoot,
  startNatsServer,
  type ManagedProcess,
  type NatsServerHandle,
} from '@dura/testing';
import { startService } from './system';

/** The users of the shipped permission sets (deploy/nats/permissions.conf), with test passwords. */
export const DURA_USERS = {
  planner: { permissions: 'DURA_PLANNER', inbox: '_INBOX.planner' },
  gateway: { permissions: 'DURA_GATEWAY', inbox: '_INBOX.gateway' },
  worker: { permissions: 'DURA_WORKER', inbox: '_INBOX.worker' },
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

/** A spec file's secured server (`useSecuredNats`), and connections to it as any shipped user. */
export interface SecuredNatsFile {
  /** The server; its `url` and `server` are there from the file's first beforeAll on. */
  nats: SecuredNats;
  /** A connection as `user`, closed in afterAll before the server. */
  as: (user: DuraUser) => Promise<NatsConnection>;
}

/**
 * Registers beforeAll/afterAll in the calling spec file: its own nats-server under the shipped permissions
 * (`startSecuredNats`), and the connections opened with `as`, closed with the server whether the tests
 * passed or not. Call it before registering the hooks that start services on it, so that their afterAll
 * (stopping the services) runs before this one closes the server.
 */
export function useSecuredNats(): SecuredNatsFile {
  let current: SecuredNats | undefined;
  const connections: NatsConnection[] = [];
  const started = (): SecuredNats => {
    if (!current) throw new Error('useSecuredNats(): the server is only there inside tests and hooks');
    return current;
  };
  beforeAll(async () => {
    current = await startSecuredNats();
  }, 180_000);
  afterAll(async () => {
    await Promise.allSettled(connections.map((nc) => nc.close()));
    await current?.close();
  });
  return {
    nats: {
      get server() {
        return started().server;
      },
      get url() {
        return started().url;
      },
      close: () => started().close(),
    },
    as: async (user) => {
      const nc = await connectAs(started().url, user);
      connections.push(nc);
      return nc;
    },
  };
}

/**
 * Asserts that the server denied `operation` for want of permission (nats.js reports the violation as the
 * error or its cause), and answers the message.
 */
export async function expectDenied(operation: Promise<unknown>): Promise<string> {
  const err = await operation.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(err, 'the operation was allowed').toBeInstanceOf(Error);
  const message = `${err?.message} ${(err?.cause as Error | undefined)?.message ?? ''}`;
  expect(message).toMatch(/Permissions Violation/);
  return message;
}

export interface ShippedServices {
  /** The projector's API, bound to 127.0.0.1. */
  apiUrl: string;
  planner: ManagedProcess;
  gateway: ManagedProcess;
  projector: ManagedProcess;
  /** Every service's output so far, for "nothing was denied" checks. */
  outputs(): string[];
  stop(): Promise<void>;
}

/**
 * The planner, the tool gateway and the projector as real processes, each connected to `nats` as its shipped
 * user. `env` adds to every service's environment; `planner`, `gateway` and `projector` to one service's
 * (e.g. the projector's API tokens, the planner's tenant agents).
 */
export async function startShippedServices(
  nats: SecuredNats,
  databaseUrl: string,
  options: {
    env?: Record<string, string>;
    planner?: Record<string, string>;
    gateway?: Record<string, string>;
    projector?: Record<string, string>;
  } = {},
): Promise<ShippedServices> {
  const port = await freePort();
  const common = {
    NATS_URL: nats.url,
    DATABASE_URL: databaseUrl,
    PROJECTOR_HTTP_PORT: String(port),
    ...options.env,
  };
  const started: ManagedProcess[] = [];
  const stop = async () => {
    await Promise.allSettled(started.map((proc) => proc.kill('SIGTERM')));
  };
  try {
    const planner = await startService('planner', { ...common, ...envOf('planner'), ...options.planner });
    started.push(planner);
    const gateway = await startService('tool-gateway', {
      ...common,
      ...envOf('gateway'),
      ...options.gateway,
    });
    started.push(gateway);
    const projector = await startService('projector', {
      ...common,
      ...envOf('projector'),
      ...options.projector,
    });
    started.push(projector);
    return {
      apiUrl: `http://127.0.0.1:${port}`,
      planner,
      gateway,
      projector,
      outputs: () => started.map((proc) => proc.output()),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
