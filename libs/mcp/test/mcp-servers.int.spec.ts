// Real MCP servers built with the SDK, over stdio (a child process) and Streamable HTTP: their tools as Dura
// tools, listed, called, refreshed on tools/list_changed, failing, cancelled, and dying mid-call.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolRegistry, type ToolContext } from '@dura/tools';
import { eventually } from '@dura/testing';
import { attachMcpServers, type McpToolSource } from '../src/index';
import {
  startWitnessHttpServer,
  WITNESS_STDIO_ENTRY,
  type WitnessCall,
  type WitnessHttpServer,
} from '../src/testing';

const silent = { info: () => undefined, warn: () => undefined };
const TOKEN = 'mcp-test-token-0123456789';
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

let http: WitnessHttpServer;
let dir: string;
let callsFile: string;
let source: McpToolSource;
const registry = new ToolRegistry([]);

function ctx(key: string, signal = AbortSignal.timeout(30_000)): ToolContext {
  return { idempotencyKey: key, runId: 'run-1', callId: 'call-1', attempt: 1, signal };
}

async function stdioCalls(): Promise<WitnessCall[]> {
  const text = await readFile(callsFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as WitnessCall);
}

function tool(name: string) {
  const found = registry.get(name);
  if (!found) throw new Error(`no tool ${name}; registry has ${registry.names().join(', ')}`);
  return found;
}

beforeAll(async () => {
  http = await startWitnessHttpServer({ token: TOKEN });
  dir = await mkdtemp(join(tmpdir(), 'dura-mcp-'));
  callsFile = join(dir, 'calls.jsonl');
  process.env.MCP_TEST_TOKEN = `Bearer ${TOKEN}`;
  source = await attachMcpServers(
    {
      web: { transport: 'http', url: http.url, headers: { authorization: { env: 'MCP_TEST_TOKEN' } } },
      local: {
        transport: 'stdio',
        command: process.execPath,
        args: ['--import', tsx, WITNESS_STDIO_ENTRY, callsFile],
        timeoutMs: 20_000,
        tools: { charge: { safety: 'idempotent', requiresApproval: true } },
      },
      fragile: {
        transport: 'stdio',
        command: process.execPath,
        args: ['--import', tsx, WITNESS_STDIO_ENTRY, join(dir, 'fragile-calls.jsonl')],
        tools: { crash: { safety: 'unsafe' } },
      },
    },
    registry,
    silent,
  );
}, 60_000);

afterAll(async () => {
  await source?.close();
  await http?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('MCP servers as tools', () => {
  it('lists both servers as mcp.<server>.<tool>, with their JSON Schemas and safety from annotations', () => {
    const names = registry.names();
    for (const server of ['web', 'local'])
      expect(names).toEqual(
        expect.arrayContaining(
          ['charge', 'upsert', 'lookup_order', 'fail', 'crash', 'slow', 'add_tool'].map(
            (t) => `mcp.${server}.${t}`,
          ),
        ),
      );
    expect(tool('mcp.web.charge').safety).toBe('unsafe');
    expect(tool('mcp.web.upsert').safety).toBe('idempotent');
    expect(tool('mcp.web.lookup_order').safety).toBe('idempotent');
    expect(tool('mcp.web.add_tool').safety, 'no hint: unsafe').toBe('unsafe');
    // The config overrides the annotations of one tool.
    expect(tool('mcp.local.charge').safety).toBe('idempotent');
    expect(tool('mcp.local.charge').requiresApproval).toBe(true);
    expect(tool('mcp.web.charge').inputJsonSchema).toMatchObject({
      type: 'object',
      properties: { amount: { type: 'integer' } },
      required: ['amount'],
    });
    expect(registry.argumentIssues('mcp.web.charge', { amount: 'ten' })).not.toEqual([]);
    expect(registry.argumentIssues('mcp.web.charge', { amount: 10 })).toEqual([]);
  });

  it('calls tools on both transports with the idempotency key in _meta, and maps structured content', async () => {
    expect(await tool('mcp.web.charge').execute({ amount: 5 }, ctx('k-web-1'))).toEqual({
      content: [{ type: 'text', text: 'charged 5' }],
    });
    expect(http.state.count('charge', 'k-web-1')).toBe(1);
    expect(http.unauthorized(), 'every request carried the header from the environment').toBe(0);
    expect(await tool('mcp.local.lookup_order').execute({ orderId: 'o-7' }, ctx('k-local-1'))).toEqual({
      content: [{ type: 'text', text: '{"orderId":"o-7","status":"shipped"}' }],
      structuredContent: { orderId: 'o-7', status: 'shipped' },
    });
    expect((await stdioCalls()).filter((c) => c.key === 'k-local-1')).toHaveLength(1);
  });

  it('turns an isError result into a terminal failure the model can read', async () => {
    await expect(tool('mcp.web.fail').execute({ why: 'no stock' }, ctx('k-fail'))).rejects.toMatchObject({
      code: 'mcp_tool_error',
      retryable: false,
      message: 'mcp.web.fail reported an error: cannot do that: no stock',
    });
  });

  it('refreshes the tool list when the server announces tools/list_changed', async () => {
    expect(registry.get('mcp.web.extra_maps')).toBeUndefined();
    http.addTool('maps');
    const added = await eventually(
      () => Promise.resolve(registry.get('mcp.web.extra_maps')),
      'the new tool to appear after tools/list_changed',
    );
    expect(await added.execute({}, ctx('k-extra'))).toEqual({
      content: [{ type: 'text', text: 'extra maps' }],
    });
    // Added through a call over stdio: that server announces the change the same way.
    await tool('mcp.local.add_tool').execute({ name: 'calendar' }, ctx('k-add'));
    await eventually(
      () => Promise.resolve(registry.get('mcp.local.extra_calendar')),
      'the stdio server tool to appear after tools/list_changed',
    );
  });

  it('lists one server again on demand (a gateway asked for a tool it has not seen yet)', async () => {
    registry.replaceGroup('mcp.web.', []);
    expect(registry.get('mcp.web.charge')).toBeUndefined();
    await source.refreshFor('mcp.local.nothing');
    expect(registry.get('mcp.web.charge'), 'another server is not listed again').toBeUndefined();
    await source.refreshFor('mcp.web.charge');
    expect(registry.get('mcp.web.charge')?.safety).toBe('unsafe');
  });

  it('an HTTP server that forgot the session (restarted): the call fails retryable, the next one reconnects', async () => {
    http.forgetSessions();
    await expect(tool('mcp.web.upsert').execute({ id: 'r2' }, ctx('k-forgot'))).rejects.toMatchObject({
      code: 'mcp_error',
      retryable: true,
    });
    expect(await tool('mcp.web.upsert').execute({ id: 'r2' }, ctx('k-forgot'))).toEqual({
      content: [{ type: 'text', text: 'stored r2' }],
    });
    expect(http.state.count('upsert', 'k-forgot')).toBe(1);
  });

  it('sends notifications/cancelled when the call is aborted', async () => {
    const abort = new AbortController();
    const call = tool('mcp.web.slow').execute({}, ctx('k-slow', abort.signal));
    await eventually(
      () => Promise.resolve(http.state.count('slow') === 1 || undefined),
      'the slow call to start',
    );
    abort.abort(new Error('run cancelled'));
    await expect(call).rejects.toThrow();
    await eventually(
      () => Promise.resolve(http.state.cancelled.some((c) => c.key === 'k-slow') || undefined),
      'the server to see the cancellation',
    );
  });

  it('a server that dies mid-call: an idempotent tool fails retryable, an unsafe one goes to an operator, and the next call starts the server again', async () => {
    await expect(tool('mcp.local.crash').execute({}, ctx('k-crash'))).rejects.toMatchObject({
      code: 'mcp_connection_lost',
      retryable: true,
    });
    expect((await stdioCalls()).filter((c) => c.key === 'k-crash')).toHaveLength(1);
    // The next call starts the server again and goes through.
    expect(await tool('mcp.local.upsert').execute({ id: 'r1' }, ctx('k-after'))).toEqual({
      content: [{ type: 'text', text: 'stored r1' }],
    });
    // An unsafe tool whose server dies under it has an unknown outcome: recorded so, for an operator.
    expect(tool('mcp.fragile.crash').safety).toBe('unsafe');
    await expect(tool('mcp.fragile.crash').execute({}, ctx('k-crash-unsafe'))).rejects.toMatchObject({
      code: 'outcome_unknown',
      retryable: false,
    });
  });
});
