import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { NatsSecurity } from '@dura/contracts';
// eslint-disable-next-line @nx/enforce-module-boundaries -- a harness, like dura-cluster.ts
import { repoRoot } from '@dura/testing';
import type { ServiceKind } from './service-kind';

/** The shipped permission sets (deploy/nats/permissions.conf) and the user each role connects as. */
const ROLES = {
  planner: 'DURA_PLANNER',
  gateway: 'DURA_GATEWAY',
  projector: 'DURA_PROJECTOR',
  worker: 'DURA_WORKER',
  client: 'DURA_CLIENT',
  admin: 'DURA_ADMIN',
} as const;
type Role = keyof typeof ROLES;

const ROLE_OF: Record<ServiceKind, Role> = {
  planner: 'planner',
  'tool-gateway': 'gateway',
  projector: 'projector',
};

export interface ClusterUsers {
  /** For startNatsCluster: include the shipped permissions and define one password user per role. */
  natsConfig: { extraConfig: string; includeFiles: string[] };
  /** The environment a replica of `kind` connects with: its own user and reply prefix. */
  envOf(kind: ServiceKind): Record<string, string>;
  /** How the SDK connects as `role` (the cluster's tests observe as admin). */
  securityOf(role: 'client' | 'admin'): NatsSecurity;
}

/**
 * Per-service NATS users for the local cluster, as production runs it: each replica connects as its service's
 * least-privilege user. Passwords are fresh random ones per cluster; they only live in its config files.
 */
export function clusterUsers(): ClusterUsers {
  const passwords = Object.fromEntries(
    Object.keys(ROLES).map((role) => [role, randomBytes(18).toString('base64url')]),
  ) as Record<Role, string>;
  const users = Object.entries(ROLES).map(
    ([role, permissions]) =>
      `    { user: ${role}, password: "${passwords[role as Role]}", permissions: $${permissions} }`,
  );
  const inbox = (role: Role) => `_INBOX.${role}`;
  return {
    natsConfig: {
      extraConfig: `include ./permissions.conf\nauthorization {\n  users = [\n${users.join('\n')}\n  ]\n}\n`,
      includeFiles: [join(repoRoot(), 'deploy/nats/permissions.conf')],
    },
    envOf(kind) {
      const role = ROLE_OF[kind];
      return { NATS_USER: role, NATS_PASSWORD: passwords[role], NATS_INBOX_PREFIX: inbox(role) };
    },
    securityOf(role) {
      return { auth: { kind: 'user', user: role, password: passwords[role] }, inboxPrefix: inbox(role) };
    },
  };
}
