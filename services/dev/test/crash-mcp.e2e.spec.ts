// The gateway SIGKILLed while an MCP tool call is in flight (the witness MCP server over Streamable HTTP
// counts each call by its idempotency key). A destructiveHint tool is never called again: the run waits for
// an operator with the server's counter at 1. An idempotentHint tool is called again with the same key
// once the dead call's lease runs out, and the run completes.
import { describe, expect, it } from 'vitest';
import type { JsonObject, RunEvent } from '@dura/contracts';
import {
  keyOf,
  useCrashSystem,
  watchToEnd,
  type CrashSystem,
  type PlanRequest,
} from './crash-harness';
import { killNow, untilLogged } from './agent-support';
import { useMcpWitnesses } from './mcp-support';
import { eventually, getJson } from './system';

// A call's lease is its timeout plus the harness's 1 s margin: a killed call is reconciled 5 s after it began.
const mcp = useMcpWitnesses((servers) => ({ ...servers, web: { ...servers.web!, timeoutMs: 4_000 } }));
const crash = useCrashSystem(['planner', 'tool-gateway', 'projector'], { env: () => mcp().env() });

function plan(runId: string, tool: string, args: JsonObject): PlanRequest {
  return { runId, agent: { kind: 'scripted', steps: [{ tool, args }] } };
}

async function killGatewayDuringCall(sys: CrashSystem, serverTool: string, key: string): Promise<void> {
  await eventually(
    () => Promise.resolve(mcp().http.state.count(serverTool, key) === 1 || undefined),
    `the ${serverTool} call to reach the MCP server`,
  );
  await killNow(sys, 'tool-gateway');
  const [row] = await sys.system.sql<{ status: string }[]>`
    select status from effects where idempotency_key = ${key}`;
  expect(row?.status, 'the call was claimed and never finished').toBe('started');
  await sys.restart('tool-gateway');
}

const isOperatorWait = (e: RunEvent) => e.type === 'wait_requested' && e.data.kind === 'operator';

describe('the gateway killed during an MCP call', () => {
  it('destructiveHint: the run waits for an operator and the server saw the call once', async () => {
    const sys = crash();
    const request = plan('crash-mcp-destructive', 'mcp.web.charge', { amount: 250, delayMs: 3_000 });
    const key = keyOf(request, 1);
    await sys.submit(request);
    await killGatewayDuringCall(sys, 'charge', key);

    const log = await untilLogged(sys, request.runId, isOperatorWait, 'the operator wait', 60_000);
    const failed = log.find((e) => e.type === 'tool_call_failed');
    expect(failed?.type === 'tool_call_failed' && failed.data.error.code).toBe('outcome_unknown');
    expect(log.find(isOperatorWait)?.data).toMatchObject({ kind: 'operator', callId: 'call-1' });
    expect(log.map((e) => e.type)).not.toContain('tool_call_completed');
    const { body } = await eventually(async () => {
      const answer = await getJson(`${sys.system.apiUrl}/runs/${request.runId}`);
      return (answer.body as { status?: string }).status === 'waiting' ? answer : undefined;
    }, 'the projection to show the wait');
    expect(body).toMatchObject({ status: 'waiting', waiting: { kind: 'operator', callId: 'call-1' } });
    expect(mcp().http.state.count('charge', key), 'the destructive call reached the server once').toBe(1);
    // The key is settled as failed in the ledger: no replica will ever run it again.
    const [row] = await sys.system.sql<{ status: string }[]>`
      select status from effects where idempotency_key = ${key}`;
    expect(row?.status).toBe('failed');
  });

  it('idempotentHint: called again with the same idempotency key, and the run completes', async () => {
    const sys = crash();
    const request = plan('crash-mcp-idempotent', 'mcp.web.upsert', { id: 'rec-7', delayMs: 3_000 });
    const key = keyOf(request, 1);
    await sys.submit(request);
    await killGatewayDuringCall(sys, 'upsert', key);

    const log = await watchToEnd(sys, request.runId, 90_000);
    expect(log.at(-1)?.type).toBe('run_completed');
    const completed = log.find((e) => e.type === 'tool_call_completed');
    expect(completed?.type === 'tool_call_completed' && completed.data.result).toEqual({
      content: [{ type: 'text', text: 'stored rec-7' }],
    });
    expect(mcp().http.state.count('upsert', key), 'called twice, both times with the same key').toBe(2);
    expect(mcp().http.state.count('upsert')).toBe(2);
    const [row] = await sys.system.sql<{ status: string; attempts: number }[]>`
      select status, attempts from effects where idempotency_key = ${key}`;
    expect(row).toEqual({ status: 'succeeded', attempts: 2 });
  });
});
