// A nats-server like secured-nats.ts, but with the shipped permissions file changed by `patch`: for tests of
// what a service does when a deployment's permissions lack something it needs.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, startNatsServer } from '@dura/testing';
import { DURA_USERS, passwordOf, type DuraUser, type SecuredNats } from './secured-nats';

export async function startPatchedNats(patch: (permissions: string) => string): Promise<SecuredNats> {
  const dir = mkdtempSync(join(tmpdir(), 'dura-patched-nats-'));
  const shipped = readFileSync(join(repoRoot(), 'deploy/nats/permissions.conf'), 'utf8');
  const patched = patch(shipped);
  if (patched === shipped) throw new Error('startPatchedNats: the patch changed nothing in permissions.conf');
  writeFileSync(join(dir, 'permissions.conf'), patched);
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
