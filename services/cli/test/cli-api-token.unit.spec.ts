import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli';

// A stand-in read API on loopback that lets in one token, as a projector with credentials configured does.
const TOKEN = 'cli-token-0123456789abcdef';
const seen: (string | undefined)[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
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

  it('from --api-token, which wins over the variable', async () => {
    const answer = await ls(['--api-token', TOKEN], { DURA_API_TOKEN: 'stale-token' });
    expect([answer.code, answer.authorization]).toEqual([0, `Bearer ${TOKEN}`]);
  });

  it('sends none without either, and reports the API refusal with its message', async () => {
    const answer = await ls([]);
    expect(answer.authorization).toBeUndefined();
    expect(answer.code).not.toBe(0);
    expect(answer.stderr).toContain('this API needs a bearer token');
  });
});
