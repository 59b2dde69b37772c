// The worked example of docs/mcp.md, as written: `npm run dev` with the example MCP server and agents, the
// refund waiting for approval, approved through `dura mcp` (started with `npm run dura -- mcp`) by the SDK's
// client; the refund runs once and the run completes.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, spawnTsEntry, type ManagedProcess } from '@dura/testing';
import { eventually } from './system';

let dev: ManagedProcess | undefined;
let dura: Client | undefined;

afterAll(async () => {
  await dura?.close();
  await dev?.kill('SIGTERM');
});

describe('docs/mcp.md worked example', () => {
  it('refunds once, after an approval sent through dura mcp', async () => {
    dev = spawnTsEntry({
      name: 'dev',
      entry: 'services/dev/src/main.ts',
      args: ['--once', '--run', 'examples/mcp/refund.json'],
      env: {
        NATS_URL: undefined,
        DATABASE_URL: undefined,
        PROJECTOR_HTTP_PORT: '0',
        DURA_MCP_SERVERS: 'examples/mcp/mcp-servers.json',
        DURA_AGENTS: 'examples/mcp/agents.json',
      },
    });
    const [, apiUrl, runId] = await eventually(
      () => {
        const output = dev?.output() ?? '';
        const found = /api {7}(http:\/\/[\d.:]+)\/runs[\s\S]*submitted (\S+) from[\s\S]*wait_requested/.exec(
          output,
        );
        return Promise.resolve(found ?? undefined);
      },
      'the example run to wait for the approval of its refund',
      90_000,
    );
    expect(dev.output()).toMatch(/tool_call_completed[^\n]*call-1/);
    expect(dev.output()).toMatch(
      /wait_requested +\{"waitId":"approval:call-3","kind":"approval","signal":"approve","callId":"call-3"/,
    );

    dura = new Client({ name: 'desk', version: '1.0.0' });
    await dura.connect(
      new StdioClientTransport({
        command: 'npm',
        args: ['run', '--silent', 'dura', '--', 'mcp'],
        cwd: repoRoot(),
        env: { ...(process.env as Record<string, string>), DURA_API_URL: apiUrl ?? '' },
        stderr: 'pipe',
      }),
    );
    const waiting = (await dura.callTool(
      { name: 'wait_run', arguments: { runId, until: 'waiting' } },
      undefined,
      { timeout: 90_000 },
    )) as CallToolResult;
    expect(waiting.structuredContent).toMatchObject({ status: 'waiting', approvals: ['call-3'] });
    const approved = (await dura.callTool({
      name: 'approve',
      arguments: { runId, callId: 'call-3' },
    })) as CallToolResult;
    expect(approved.isError).toBeFalsy();

    const exit = await dev.exited;
    const output = dev.output();
    expect(exit.code, output).toBe(0);
    expect(output).toMatch(/run_completed[^\n]*refund rf-1: 120 to order o-1001/);
    expect(output.match(/tool_call_completed/g)).toHaveLength(3);
  }, 180_000);
});
