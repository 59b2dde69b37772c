// @modelcontextprotocol/conformance (from the npm registry) against `dura mcp --http`: every scenario that
// does not test the reference server's own fixtures passes (the baseline lists those that do).
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, spawnTsEntry, type ManagedProcess } from '@dura/testing';

const CLI_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const BASELINE = fileURLToPath(new URL('./fixtures/mcp-conformance-baseline.yml', import.meta.url));
const CONFORMANCE = join(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json'),
  '../dist/index.js',
);

let server: ManagedProcess | undefined;
let url = '';
let outDir = '';

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'dura-mcp-conformance-'));
  // No API behind it: the scenarios exercise the protocol, not runs. Nothing listens on port 9.
  server = spawnTsEntry({
    name: 'dura-mcp',
    entry: CLI_MAIN,
    args: ['mcp', '--http', '--port', '0', '--anonymous'],
    env: { ...process.env, DURA_API_URL: 'http://127.0.0.1:9', DURA_API_TOKEN: '' },
  });
  url = await eventually(
    () => Promise.resolve(/http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(server?.output() ?? '')?.[0]),
    'dura mcp --http to print its URL',
    60_000,
  );
});

afterAll(async () => {
  await server?.kill('SIGTERM');
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe('dura mcp under the MCP conformance suite', () => {
  it('passes every scenario outside the reference fixtures', async () => {
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        process.execPath,
        [CONFORMANCE, 'server', '--url', url, '--expected-failures', BASELINE, '-o', outDir],
        { timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) =>
          resolve({
            code: err ? Number((err as { code?: number }).code ?? 1) : 0,
            output: `${stdout}${stderr}`,
          }),
      );
    });
    const summary = output.slice(output.indexOf('=== SUMMARY ==='));
    expect(code, summary).toBe(0);
    const passed = [...summary.matchAll(/^✓ ([\w-]+):/gm)].map((m) => m[1]);
    expect(passed).toEqual(
      expect.arrayContaining([
        'server-initialize',
        'ping',
        'logging-set-level',
        'tools-list',
        'tools-call-error',
        'resources-list',
        'dns-rebinding-protection',
      ]),
    );
    // The tool list the suite read is Dura's.
    const dirs = await readdir(outDir);
    const toolsList = dirs.find((d) => d.startsWith('server-tools-list-'));
    const checks = JSON.parse(await readFile(join(outDir, toolsList ?? '', 'checks.json'), 'utf8')) as {
      status: string;
    }[];
    expect(checks.every((c) => c.status === 'SUCCESS')).toBe(true);
  });
});
