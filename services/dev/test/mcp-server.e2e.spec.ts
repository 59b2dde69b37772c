// `dura mcp` driven by the MCP SDK's own client, over stdio and over Streamable HTTP, against the three
// services with the projector requiring tokens: start a run of a served agent, wait for it (with progress
// notifications), approve its call, read its state and events. A read-only token can read but not start or
// approve; a request without a token, or with another token than the session's, is refused. A client
// subscribed to a run's resources hears of each new event until it unsubscribes; another tenant cannot subscribe.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnTsEntry, type ManagedProcess } from '@dura/testing';
import { useCrashSystem } from './crash-harness';
import { fakeModel, toolMessages, useAgentModel, type WireBody } from './agent-support';
import { eventually } from './system';

const OPS = 'ops-token-0123456789abcdef';
const VIEWER = 'viewer-token-0123456789abcdef';
const OTHER_TENANT = 'acme-reader-token-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'dura-mcp-server-'));
const tokensFile = join(dir, 'tokens.json');
writeFileSync(
  tokensFile,
  JSON.stringify([
    { name: 'ops', token: OPS, tenant: 'default', scopes: ['read', 'submit', 'signal', 'cancel'] },
    { name: 'viewer', token: VIEWER, tenant: 'default', scopes: ['read'] },
    { name: 'acme', token: OTHER_TENANT, tenant: 'acme', scopes: ['read'] },
  ]),
);
const CLI_MAIN = fileURLToPath(new URL('../../cli/src/main.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

const model = useAgentModel((url) => ({
  agents: [
    {
      name: 'announcer',
      version: '1',
      systemPrompt: 'You announce releases; a human approves every announcement.',
      model: fakeModel(url),
      tools: ['demo.notify'],
      approvals: { tools: ['demo.notify'] },
    },
  ],
}));
const crash = useCrashSystem(['planner', 'tool-gateway', 'projector'], {
  env: (name): Record<string, string> => ({
    ...(name === 'planner' ? { DURA_AGENTS: model().agentsPath } : {}),
    ...(name === 'projector' ? { PROJECTOR_API_TOKENS_FILE: tokensFile } : {}),
  }),
});

let httpServer: ManagedProcess | undefined;
let httpUrl = '';
const clients: Client[] = [];

beforeAll(async () => {
  const sys = crash();
  httpServer = spawnTsEntry({
    name: 'dura-mcp-http',
    entry: CLI_MAIN,
    args: ['mcp', '--http', '--port', '0'],
    env: { ...process.env, DURA_API_URL: sys.system.apiUrl, NATS_URL: sys.system.env['NATS_URL'] ?? '' },
  });
  httpUrl = await eventually(
    () => Promise.resolve(/http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(httpServer?.output() ?? '')?.[0]),
    'dura mcp --http to print its URL',
    60_000,
  );
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await httpServer?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

function announceOnce(body: WireBody) {
  const result = toolMessages(body)[0];
  if (!result)
    return {
      kind: 'message' as const,
      content: 'Announcing.',
      toolCalls: [{ name: 'demo__notify', arguments: { channel: 'releases', message: 'v2 is out' } }],
    };
  return { kind: 'message' as const, content: `Announced: ${result.content ?? ''}` };
}

async function stdioClient(token: string): Promise<Client> {
  const sys = crash();
  const client = new Client({ name: 'dura-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', tsx, CLI_MAIN, 'mcp'],
      env: { ...getDefaultEnvironment(), DURA_API_URL: sys.system.apiUrl, DURA_API_TOKEN: token },
      stderr: 'pipe',
    }),
  );
  clients.push(client);
  return client;
}

async function httpClient(
  token: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'dura-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(httpUrl), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const structured = (result: unknown) =>
  (result as CallToolResult).structuredContent as Record<string, unknown>;
const textOf = (result: unknown) =>
  (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('dura mcp', () => {
  it('over stdio: starts a run of a served agent, waits with progress, approves it, reads its state and events', async () => {
    const llm = model();
    const input = 'Announce release v2.';
    llm.script(input, announceOnce);
    const client = await stdioClient(OPS);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['approve', 'cancel', 'get_run', 'list_runs', 'reject', 'signal', 'start_run', 'wait_run'].sort(),
    );

    const started = await client.callTool({
      name: 'start_run',
      arguments: { agent: 'announcer', input, runId: 'mcp-served-1' },
    });
    expect(started.isError, textOf(started)).toBeFalsy();
    expect(structured(started)).toMatchObject({ runId: 'mcp-served-1', duplicate: false });

    const progress: string[] = [];
    const waiting = await client.callTool(
      { name: 'wait_run', arguments: { runId: 'mcp-served-1', until: 'waiting', timeoutSeconds: 60 } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? ''), timeout: 90_000 },
    );
    expect(structured(waiting)).toMatchObject({ status: 'waiting', approvals: ['call-1'], timedOut: false });
    expect(progress.length, 'progress notifications while waiting').toBeGreaterThan(0);
    for (const message of progress) expect(message).toMatch(/^(pending|running|waiting) at seq \d+$/);

    const approved = await client.callTool({
      name: 'approve',
      arguments: { runId: 'mcp-served-1', callId: 'call-1' },
    });
    expect(approved.isError, textOf(approved)).toBeFalsy();
    const done = await client.callTool(
      { name: 'wait_run', arguments: { runId: 'mcp-served-1', timeoutSeconds: 60 } },
      undefined,
      { timeout: 90_000 },
    );
    expect(structured(done)).toMatchObject({ status: 'completed', timedOut: false });

    const events = await client.readResource({ uri: 'dura://runs/mcp-served-1/events' });
    const log = JSON.parse((events.contents[0] as { text: string }).text) as { type: string }[];
    expect(log.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        'run_requested',
        'wait_requested',
        'signal_received',
        'tool_call_completed',
        'run_completed',
      ]),
    );
    const state = await client.readResource({ uri: 'dura://runs/mcp-served-1' });
    expect(JSON.parse((state.contents[0] as { text: string }).text)).toMatchObject({
      runId: 'mcp-served-1',
      status: 'completed',
    });
    const listed = await client.callTool({ name: 'list_runs', arguments: { status: ['completed'] } });
    expect((structured(listed).runs as { runId: string }[]).map((r) => r.runId)).toContain('mcp-served-1');
  });

  it('over HTTP: a read-only token reads, but cannot start or approve; the run stays waiting', async () => {
    const llm = model();
    const input = 'Announce release v3.';
    llm.script(input, announceOnce);
    const { client: ops } = await httpClient(OPS);
    const { client: viewer } = await httpClient(VIEWER);

    const refusedStart = await viewer.callTool({
      name: 'start_run',
      arguments: { agent: 'announcer', input },
    });
    expect(refusedStart.isError).toBe(true);
    expect(textOf(refusedStart)).toContain('HTTP 403');

    await ops.callTool({
      name: 'start_run',
      arguments: { agent: 'announcer', input, runId: 'mcp-served-2' },
    });
    const waiting = await viewer.callTool(
      { name: 'wait_run', arguments: { runId: 'mcp-served-2', until: 'waiting', timeoutSeconds: 60 } },
      undefined,
      { timeout: 90_000 },
    );
    expect(structured(waiting)).toMatchObject({ status: 'waiting', approvals: ['call-1'] });

    const refused = await viewer.callTool({
      name: 'approve',
      arguments: { runId: 'mcp-served-2', callId: 'call-1' },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/insufficient_scope \(HTTP 403\)/);
    const refusedCancel = await viewer.callTool({ name: 'cancel', arguments: { runId: 'mcp-served-2' } });
    expect(textOf(refusedCancel)).toContain('HTTP 403');
    const still = await viewer.callTool({ name: 'get_run', arguments: { runId: 'mcp-served-2' } });
    expect(structured(still)).toMatchObject({ status: 'waiting', approvals: ['call-1'] });

    // The operator's approval goes through, over the same server.
    const approved = await ops.callTool({
      name: 'approve',
      arguments: { runId: 'mcp-served-2', callId: 'call-1' },
    });
    expect(approved.isError, textOf(approved)).toBeFalsy();
    const done = await ops.callTool(
      { name: 'wait_run', arguments: { runId: 'mcp-served-2', timeoutSeconds: 60 } },
      undefined,
      { timeout: 90_000 },
    );
    expect(structured(done)).toMatchObject({ status: 'completed' });
  });

  it('approve answers a ctx.approve-style verdict wait with {approved: true}, and refuses a run that waits for none', async () => {
    const sys = crash();
    const { client: ops } = await httpClient(OPS);
    const runId = 'mcp-verdict-1';
    // A wait for a person's verdict, as ctx.approve opens it (a scripted plan stands in for the code).
    await sys.submit({
      runId,
      agent: {
        kind: 'scripted',
        steps: [{ tool: 'dura.wait_for_signal', args: { name: 'publish', approval: true } }],
        output: '$steps.1',
      },
    });
    const waiting = await ops.callTool(
      { name: 'wait_run', arguments: { runId, until: 'waiting', timeoutSeconds: 60 } },
      undefined,
      { timeout: 90_000 },
    );
    expect(structured(waiting)).toMatchObject({ status: 'waiting', approvals: ['call-1'] });
    const approved = await ops.callTool({ name: 'approve', arguments: { runId } });
    expect(approved.isError, textOf(approved)).toBeFalsy();
    expect(structured(approved)).toMatchObject({ name: 'publish', payload: { approved: true } });
    const done = await ops.callTool(
      { name: 'wait_run', arguments: { runId, timeoutSeconds: 60 } },
      undefined,
      { timeout: 90_000 },
    );
    expect(structured(done)).toMatchObject({ status: 'completed', output: { approved: true } });

    const late = await ops.callTool({ name: 'approve', arguments: { runId } });
    expect(late.isError).toBe(true);
    expect(textOf(late)).toContain(
      `approval_wait_not_found: run ${runId} is completed: it waits for no approval`,
    );
  });

  it('over HTTP: a subscription to a run notifies each new event until unsubscribed; another tenant is refused', async () => {
    const sys = crash();
    const runId = 'mcp-subscribed-1';
    const uri = `dura://runs/${runId}`;
    const { client: ops } = await httpClient(OPS);
    expect(ops.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
    const heard: string[] = [];
    ops.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      heard.push(notification.params.uri);
    });
    const heardOf = (u: string) => heard.filter((h) => h === u).length;
    await sys.submit({
      runId,
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'dura.wait_for_signal', args: { name: 'go' } },
          { tool: 'dura.wait_for_signal', args: { name: 'again' } },
        ],
        output: '$steps.2',
      },
    });
    // The run as the API folds it, once it waits for `signal` (or has ended, for undefined).
    const reached = (signal: string | undefined) =>
      eventually(
        async () => {
          const state = structured(await ops.callTool({ name: 'get_run', arguments: { runId } }));
          const waiting = state.waiting as { signal?: string } | null;
          return (signal === undefined ? state.status === 'completed' : waiting?.signal === signal)
            ? state
            : undefined;
        },
        `run ${runId} waiting for ${signal ?? 'nothing: completed'}`,
        60_000,
      );
    const first = await reached('go');

    // Another tenant's token cannot subscribe, as it cannot read; nor can a uri that names no run.
    const { client: acme } = await httpClient(OTHER_TENANT);
    await expect(acme.readResource({ uri })).rejects.toThrow(/run_not_found/);
    await expect(acme.subscribeResource({ uri })).rejects.toThrow(/run_not_found/);
    await expect(ops.subscribeResource({ uri: 'dura://schedules/x' })).rejects.toThrow(/cannot subscribe/);

    await ops.subscribeResource({ uri });
    await ops.subscribeResource({ uri: `${uri}/events` });
    expect(heard, 'nothing is new yet').toEqual([]);
    await ops.callTool({ name: 'signal', arguments: { runId, name: 'go', payload: 1 } });
    const second = await reached('again');
    const readLog = async () =>
      JSON.parse(
        ((await ops.readResource({ uri: `${uri}/events` })).contents[0] as { text: string }).text,
      ) as { seq: number }[];
    // One notification per event after the subscription, for each subscribed uri.
    const sinceFirst = (await readLog()).filter((e) => e.seq > Number(first.lastSeq)).length;
    expect(sinceFirst).toBeGreaterThan(0);
    expect(Number(second.lastSeq)).toBeGreaterThan(Number(first.lastSeq));
    await eventually(
      () =>
        Promise.resolve(
          heardOf(uri) === sinceFirst && heardOf(`${uri}/events`) === sinceFirst ? true : undefined,
        ),
      `${sinceFirst} notifications for each uri (heard ${JSON.stringify(heard)})`,
      60_000,
    );

    // Unsubscribed from the state: the events uri, still subscribed, hears the rest of the run; the state none.
    await ops.unsubscribeResource({ uri });
    await ops.callTool({ name: 'signal', arguments: { runId, name: 'again', payload: 2 } });
    expect(await reached(undefined)).toMatchObject({ status: 'completed', output: 2 });
    const total = (await readLog()).filter((e) => e.seq > Number(first.lastSeq)).length;
    expect(total).toBeGreaterThan(sinceFirst);
    await eventually(
      () => Promise.resolve(heardOf(`${uri}/events`) === total ? true : undefined),
      `${total} notifications for the events uri (heard ${heardOf(`${uri}/events`)})`,
      60_000,
    );
    expect(heardOf(uri), 'no notification after unsubscribing').toBe(sinceFirst);
  });

  it('over HTTP: no token is 401, a bad token cannot read, and a session answers only its own token', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const anonymous = await fetch(httpUrl, { method: 'POST', headers, body: JSON.stringify(init) });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');

    const { client: forged } = await httpClient('not-a-token-of-this-deployment');
    const read = await forged.callTool({ name: 'list_runs', arguments: {} });
    expect(read.isError).toBe(true);
    expect(textOf(read)).toContain('HTTP 401');

    const { transport } = await httpClient(OPS);
    const hijack = await fetch(httpUrl, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${VIEWER}`, 'mcp-session-id': transport.sessionId ?? '' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(hijack.status).toBe(403);
  });
});
