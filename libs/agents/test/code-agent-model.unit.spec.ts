import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defineAgent, type AnyCodeAgent } from '@dura/code-agents';
import type { RunRequest } from '@dura/contracts';
import { CANCEL_SIGNAL } from '@dura/core';
import { createScriptedModel, loadAgents, withCodeAgents, type Model } from '../src/index';
import { simulateRun } from '../src/testing';
import * as z from 'zod';
import { defineTool, ToolRegistry } from '@dura/tools';
import { stepper } from './replay-code-support';

const FIXTURE = fileURLToPath(new URL('./fixtures/code-agents.ts', import.meta.url));

function modelOf(...agents: AnyCodeAgent[]): Model {
  return withCodeAgents({ agents, base: createScriptedModel() });
}

function request(runId: string, name: string): RunRequest & { runId: string } {
  return { v: 1, runId, agent: { kind: 'agent', name } };
}

const fanOut = defineAgent({
  name: 'fan',
  version: '1',
  tools: ['pay.charge', 'pay.checked'],
  async run(ctx) {
    const [a, b] = await Promise.all([
      ctx.tool('pay.charge', { amount: 1 }),
      ctx.tool('pay.checked', { amount: 2 }),
    ]);
    await ctx.tool('pay.charge', { amount: 3 });
    return { a, b };
  },
});

describe('code agents served next to the base model', () => {
  it('asks for approval of a call to a tool defined with requiresApproval, as for any agent', async () => {
    const charge = defineTool({
      name: 'pay.charge',
      description: 'charges a card',
      input: z.object({ amount: z.number() }),
      safety: 'idempotent',
      requiresApproval: { timeoutSeconds: 60 },
      execute: () => Promise.resolve(null),
    });
    const model = withCodeAgents({
      agents: [fanOut],
      base: createScriptedModel(),
      tools: new ToolRegistry([charge]),
    });
    // A person approves each charge as it waits: then the run goes on as without approvals.
    const approved = new Set<string>();
    const run = await simulateRun(request('fan-approve', 'fan'), model, {
      before: (state) => {
        const callId = state.waiting?.kind === 'approval' ? state.waiting.callId : undefined;
        if (!callId || approved.has(callId)) return [];
        approved.add(callId);
        return [
          {
            type: 'signal_received',
            data: { signalId: `a-${callId}`, name: 'approve', payload: { callId, approved: true } },
          },
        ];
      },
    });
    expect(run.state.status).toBe('completed');
    const [first] = run.events.flatMap((e) => (e.type === 'thought' ? [e.data.decision] : []));
    if (first?.kind !== 'tool_calls') throw new Error(`expected tool calls, got ${first?.kind}`);
    expect([...approved]).toEqual(['call-1', 'call-3']);
    expect(first.calls.map((c) => [c.tool, c.approval])).toEqual([
      ['pay.charge', { onTimeout: 'reject', timeoutSeconds: 60 }],
      ['pay.checked', undefined],
    ]);
  });

  it('loads every code agent a DURA_AGENTS module exports, named or in an array, once each', async () => {
    const { registry, codeAgents } = await loadAgents(FIXTURE);
    expect(registry.names()).toEqual([]);
    expect(codeAgents.map((a) => `${a.name}@${a.version}`).sort()).toEqual(['greeter@1', 'greeter@2']);
  });

  it('pins a run to the newest version (or the one asked for) and serves only versions it holds', () => {
    const model = withCodeAgents({
      agents: [stepper('pay.charge'), { ...fanOut, version: '2' }, fanOut],
      base: createScriptedModel(),
    });
    expect(model.start?.(request('r1', 'fan')).pinned).toMatchObject({
      agent: 'fan',
      version: '2',
      provider: 'code',
    });
    const v1 = { ...request('r2', 'fan'), agent: { kind: 'agent' as const, name: 'fan', version: '1' } };
    expect(model.start?.(v1).pinned?.version).toBe('1');
    const pinned = model.start?.(request('r3', 'stepper')).pinned;
    expect(pinned && model.serves?.(pinned)).toBe(true);
    expect(pinned && model.serves?.({ ...pinned, version: '9' })).toBe(false);
  });

  it('records a Promise.all fan-out as one thought with two calls, then the final step, then completes', async () => {
    const run = await simulateRun(request('fan-1', 'fan'), modelOf(fanOut));
    expect(run.state.status).toBe('completed');
    const thoughts = run.events.flatMap((e) => (e.type === 'thought' ? [e.data.decision] : []));
    expect(thoughts.map((d) => (d.kind === 'tool_calls' ? d.calls.map((c) => c.tool) : d.kind))).toEqual([
      ['pay.charge', 'pay.checked'],
      ['pay.charge'],
      'complete',
    ]);
  });

  it('opens an operator wait naming both calls when the code asks another tool at a recorded position', async () => {
    const first = await simulateRun(request('step-1', 'stepper'), modelOf(stepper('pay.charge')));
    expect(first.state.waiting?.kind).toBe('signal');
    let signalled = false;
    const second = await simulateRun(request('step-1', 'stepper'), modelOf(stepper('pay.checked')), {
      start: first.events,
      before: () => {
        if (signalled) return [];
        signalled = true;
        return [{ type: 'signal_received', data: { signalId: 's1', name: 'go' } }];
      },
    });
    expect(second.state.status).toBe('waiting');
    expect(second.state.waiting).toMatchObject({ kind: 'operator' });
    expect(second.state.waiting?.reason).toMatch(/non-determinism.*pay\.charge.*pay\.checked/);
    const tools = second.events.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data.tool] : []));
    expect(tools).not.toContain('pay.checked');

    // An operator's way out: cancelling the run ends it; still nothing of the changed code ran.
    const cancelled = await simulateRun(request('step-1', 'stepper'), modelOf(stepper('pay.checked')), {
      start: second.events,
      before: (state) =>
        state.status === 'waiting'
          ? [
              {
                type: 'signal_received',
                data: { signalId: 'c1', name: CANCEL_SIGNAL, payload: { reason: 'bad deploy' } },
              },
            ]
          : [],
    });
    expect(cancelled.state.status).toBe('cancelled');
    expect(
      cancelled.events.filter((e) => e.type === 'tool_call_requested' && e.data.tool === 'pay.checked'),
    ).toEqual([]);
  });
});

describe('ctx.model of a code agent that declares no model', () => {
  it('fails the run with a reason that says how to declare one, without asking any model', async () => {
    const asker = defineAgent({
      name: 'asker',
      version: '1',
      tools: [],
      run: async (ctx) => (await ctx.model({ prompt: 'hi' })).content,
    });
    const run = await simulateRun(request('ask-1', 'asker'), modelOf(asker));
    expect(run.state.status).toBe('failed');
    const failed = run.events.find((e) => e.type === 'run_failed');
    expect(failed?.data).toMatchObject({ error: { code: 'agent_misuse' } });
    expect(JSON.stringify(failed?.data)).toMatch(
      /calls ctx\.model but declares no model: add defineAgent\(\{ model:/,
    );
  });
});
