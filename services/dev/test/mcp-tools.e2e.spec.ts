// Tools of MCP servers (real servers built with the SDK: one over Streamable HTTP, one over stdio) called by
// a scripted plan and by an LLM agent through the fake provider, as `mcp.<server>.<tool>`: their results
// become observations, an `isError` result a failure the model reads, and a tool the server adds later
// (tools/list_changed) becomes callable without restarting anything.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import type { PayloadRef } from '@dura/contracts';
import { SCREENSHOT_PNG } from '@dura/mcp/testing';
import { createPayloadStore } from '@dura/payloads';
import type { RunEvent } from '@dura/contracts';
import { eventually } from '@dura/testing';
import { useCrashSystem, watchToEnd } from './crash-harness';
import { fakeModel, ledgerOf, toolMessages, useAgentModel, type WireBody } from './agent-support';
import { useMcpWitnesses } from './mcp-support';

const mcp = useMcpWitnesses();
const model = useAgentModel((url) => ({
  agents: [
    {
      name: 'orders',
      version: '1',
      systemPrompt: 'You look orders up.',
      model: fakeModel(url),
      tools: ['mcp.web.lookup_order', 'mcp.web.fail'],
    },
  ],
}));
const crash = useCrashSystem(['planner', 'tool-gateway'], {
  env: (name): Record<string, string> => ({
    ...mcp().env(),
    ...(name === 'planner' ? { DURA_AGENTS: model().agentsPath } : {}),
  }),
});

const completions = (log: readonly RunEvent[]) =>
  log.flatMap((e) => (e.type === 'tool_call_completed' ? [e.data] : []));

describe('MCP tools as Dura tools', () => {
  it('a scripted plan calls tools of both servers, each once with its idempotency key', async () => {
    const sys = crash();
    const runId = 'mcp-scripted';
    await sys.submit({
      runId,
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'mcp.web.lookup_order', args: { orderId: 'o-1' } },
          { tool: 'mcp.local.upsert', args: { id: 'r-1' } },
          { tool: 'mcp.web.charge', args: { amount: 40 } },
        ],
      },
    });
    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_completed');
    expect(completions(log).map((c) => c.result)).toEqual([
      {
        content: [{ type: 'text', text: '{"orderId":"o-1","status":"shipped"}' }],
        structuredContent: { orderId: 'o-1', status: 'shipped' },
      },
      { content: [{ type: 'text', text: 'stored r-1' }] },
      { content: [{ type: 'text', text: 'charged 40' }] },
    ]);
    const keys = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data.idempotencyKey] : []));
    expect(mcp().http.state.count('lookupOrder', keys[0])).toBe(1);
    expect((await mcp().stdioCalls()).filter((c) => c.key === keys[1])).toHaveLength(1);
    expect(mcp().http.state.count('charge', keys[2])).toBe(1);
    expect((await ledgerOf(sys, runId)).map((row) => [row.tool, row.status])).toEqual([
      ['mcp.web.lookup_order', 'succeeded'],
      ['mcp.local.upsert', 'succeeded'],
      ['mcp.web.charge', 'succeeded'],
    ]);
    expect(mcp().http.unauthorized(), 'the bearer header reached the server').toBe(0);
  });

  it('images and binary resources go to the object store; the observation keeps their references', async () => {
    const sys = crash();
    const runId = 'mcp-binary';
    await sys.submit({
      runId,
      agent: { kind: 'scripted', steps: [{ tool: 'mcp.web.screenshot', args: { page: 'home' } }] },
    });
    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_completed');
    const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const png = Buffer.from(SCREENSHOT_PNG, 'base64');
    const html = Buffer.from('<h1>home</h1>');
    expect(completions(log)[0]?.result).toEqual({
      content: [
        {
          type: 'image',
          mimeType: 'image/png',
          dataRef: { uri: expect.any(String), sha256: sha256(png), size: png.length },
        },
        {
          type: 'resource',
          resource: {
            uri: 'file:///home.html',
            mimeType: 'text/html',
            blobRef: { uri: expect.any(String), sha256: sha256(html), size: html.length },
          },
        },
      ],
    });
    const store = createPayloadStore({ js: sys.system.js });
    const ref = (completions(log)[0]?.result as { content: { dataRef: PayloadRef }[] }).content[0]!.dataRef;
    expect(Buffer.from(await store.get(ref))).toEqual(png);
  });

  it('cancelling the run sends the MCP server notifications/cancelled for the call in flight', async () => {
    const sys = crash();
    const runId = 'mcp-cancel';
    await sys.submit({ runId, agent: { kind: 'scripted', steps: [{ tool: 'mcp.web.slow', args: {} }] } });
    const key = await eventually(
      () =>
        Promise.resolve(
          mcp().http.state.calls.find((c) => c.tool === 'slow' && c.key?.startsWith(`${runId}:`))?.key,
        ),
      'the slow call to reach the server',
    );
    await createDuraClient(sys.system).cancel(runId, { reason: 'no longer needed' });
    await eventually(
      () => Promise.resolve(mcp().http.state.cancelled.some((c) => c.key === key) || undefined),
      'the server to see notifications/cancelled',
    );
    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_cancelled');
  });

  it('an isError result fails the call, not retried, with the server text', async () => {
    const sys = crash();
    const runId = 'mcp-is-error';
    await sys.submit({
      runId,
      agent: { kind: 'scripted', steps: [{ tool: 'mcp.web.fail', args: { why: 'out of stock' } }] },
    });
    const log = await watchToEnd(sys, runId);
    const failed = log.flatMap((e) => (e.type === 'tool_call_failed' ? [e.data] : []));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      error: {
        code: 'mcp_tool_error',
        message: 'mcp.web.fail reported an error: cannot do that: out of stock',
      },
      retryable: false,
    });
    expect(log.at(-1)?.type).toBe('run_failed');
  });

  it('an LLM agent sees the servers’ JSON Schemas under provider names, and reads results and isError failures', async () => {
    const sys = crash();
    const llm = model();
    const runId = 'mcp-llm';
    const input = 'Where is order o-9?';
    llm.script(input, (body: WireBody) => {
      if (toolMessages(body).length === 0)
        return {
          kind: 'message',
          content: 'Looking it up.',
          toolCalls: [
            { name: 'mcp__web__lookup_order', arguments: { orderId: 'o-9' } },
            { name: 'mcp__web__fail', arguments: { why: 'no refunds' } },
          ],
        };
      return {
        kind: 'message',
        content: `Done: ${toolMessages(body)
          .map((m) => m.content)
          .join(' | ')}`,
      };
    });
    await sys.submit({ runId, agent: { kind: 'agent', name: 'orders' }, input });
    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_completed');

    const [first, second] = llm.requestsFor(input) as (WireBody & {
      tools: { function: { name: string; parameters: Record<string, unknown> } }[];
    })[];
    const offered = first?.tools.map((t) => t.function).filter((t) => t.name.startsWith('mcp__'));
    expect(offered?.map((t) => t.name).sort()).toEqual(['mcp__web__fail', 'mcp__web__lookup_order']);
    expect(offered?.find((t) => t.name === 'mcp__web__lookup_order')?.parameters).toMatchObject({
      type: 'object',
      properties: { orderId: { type: 'string' } },
      required: ['orderId'],
    });
    const results = toolMessages(second!).map((m) => m.content ?? '');
    expect(results[0]).toContain('shipped');
    expect(results[1]).toContain('cannot do that: no refunds');
  });

  it('a tool the server adds later (tools/list_changed) is planned and called without a restart', async () => {
    const sys = crash();
    const listed = mcp().http.lists();
    mcp().http.addTool('maps');
    // Planner and gateway each get tools/list_changed on their session and list the tools again.
    await eventually(
      () => Promise.resolve(mcp().http.lists() >= listed + 2 || undefined),
      'planner and gateway to list the tools again',
    );
    const runId = 'mcp-list-changed';
    await sys.submit({
      runId,
      agent: { kind: 'scripted', steps: [{ tool: 'mcp.web.extra_maps', args: {} }] },
    });
    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_completed');
    expect(completions(log)[0]?.result).toEqual({ content: [{ type: 'text', text: 'extra maps' }] });
  });
});
