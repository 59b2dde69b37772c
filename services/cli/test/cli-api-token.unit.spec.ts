import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli';

// A stand-in read API on loopback that lets in one token, as a projector with credentials configured does.
const TOKEN = 'cli-token-0123456789abcdef';
const seen: (string | undefined)[] = [];
let server: Server;
let url: string;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dura-cli-token-'));
  server = createServer((req, res) => {
    seen.push(req.headers.authorization);
    const ok = req.headers.authorization === `Bearer ${TOKEN}`;
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        ok ? { runs: [] } : { error: { code: 'unauthenticated', message: 'this API needs a bearer token' } },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await new Promise((resolve) => server.close(resolve));
});

async function ls(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['ls', '--api', url, '--json', ...argv], {
    env,
    streams: { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
  });
  return { code, stdout, stderr, authorization: seen.at(-1) };
}

describe('the CLI sends the read API a bearer token', () => {
  it('from DURA_API_TOKEN', async () => {
    const answer = await ls([], { DURA_API_TOKEN: TOKEN });
    expect([answer.code, answer.authorization]).toEqual([0, `Bearer ${TOKEN}`]);
  });

  it('from --api-token, which wins over the variable but warns why and what to use instead', async () => {
    const answer = await ls(['--api-token', TOKEN], { DURA_API_TOKEN: 'stale-token' });
    expect([answer.code, answer.authorization]).toEqual([0, `Bearer ${TOKEN}`]);
    expect(answer.stderr).toContain(
      'dura: warning: --api-token puts the token in the process list (ps) and your shell history; set DURA_API_TOKEN, or put it in a file readable only by you and pass --api-token-file FILE (or DURA_API_TOKEN_FILE)',
    );
    expect(answer.stderr).not.toContain(TOKEN);
  });

  it('from --api-token-file or DURA_API_TOKEN_FILE (the file wins over DURA_API_TOKEN), without a warning', async () => {
    const file = join(dir, 'token');
    await writeFile(file, `${TOKEN}\n`);
    await chmod(file, 0o600);
    const byFlag = await ls(['--api-token-file', file], { DURA_API_TOKEN: 'stale-token' });
    expect([byFlag.code, byFlag.authorization, byFlag.stderr]).toEqual([0, `Bearer ${TOKEN}`, '']);
    const byEnv = await ls([], { DURA_API_TOKEN_FILE: file, DURA_API_TOKEN: 'stale-token' });
    expect([byEnv.code, byEnv.authorization, byEnv.stderr]).toEqual([0, `Bearer ${TOKEN}`, '']);
  });

  it('refuses a missing or empty token file, or both flags, with a usage error naming the fix', async () => {
    const missing = await ls(['--api-token-file', join(dir, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /--api-token-file: the token file .*nope does not exist; point it at the file/,
    );
    const empty = join(dir, 'empty');
    await writeFile(empty, '\n');
    const blank = await ls([], { DURA_API_TOKEN_FILE: empty });
    expect(blank.code).toBe(2);
    expect(blank.stderr).toMatch(
      /DURA_API_TOKEN_FILE: the token file .*empty is empty; it must hold the API token alone/,
    );
    const both = await ls(['--api-token', TOKEN, '--api-token-file', empty]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--api-token and --api-token-file are both given/);
  });

  it('sends none without either, and reports the API refusal with its message', async () => {
    const answer = await ls([]);
    expect(answer.authorization).toBeUndefined();
    expect(answer.code).not.toBe(0);
    expect(answer.stderr).toContain('this API needs a bearer token');
  });
});
