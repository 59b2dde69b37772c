// What a registered agent says of its input's secrets (`Model.inputSecrets`), and a code agent's run whose
// secret input is sealed in the log: the code passes it on as it is, and its recorded calls match on replay.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, sealedSecret } from '@dura/code-agents';
import type { Decision, RunRequest } from '@dura/contracts';
import { createSecretsBox, isSecretEnvelope, sealSecretFields, ToolRegistry } from '@dura/tools';
import {
  AgentRegistry,
  createAgentModel,
  createCodeContinuations,
  createModelRouter,
  createScriptedModel,
  withCodeAgents,
} from '../src/index';
import { simulateRun } from '../src/testing';
import { secretCardTool } from '@dura/tools/testing';

const pay = secretCardTool();
const tools = new ToolRegistry([pay]);
const box = createSecretsBox(`k1:${randomBytes(32).toString('base64')}`)!;

const payCode = defineAgent({
  name: 'pay-code',
  version: '1',
  tools: ['pay'],
  input: z.object({ amount: z.number(), card: z.object({ token: sealedSecret }) }),
  secrets: { input: ['card.token'] },
  async run(ctx, input) {
    await ctx.tool('pay', { amount: input.amount, card: input.card });
    return ctx.tool('pay', { amount: input.amount + 1, card: input.card });
  },
});
/** The same code, taking the token in clear (nothing declared): the planner seals its calls' secret fields. */
const payClear = defineAgent({
  name: 'pay-clear',
  version: '1',
  tools: ['pay'],
  async run(ctx, input: { token: string }) {
    await ctx.tool('pay', { amount: 1, card: { token: input.token } });
    return ctx.tool('pay', { amount: 2, card: { token: input.token } });
  },
});

const registry = new AgentRegistry({
  agents: [
    {
      name: 'pay-card',
      version: '1',
      tools: ['pay'],
      model: {
        provider: 'scripted',
        steps: [
          { tool: 'pay', args: { amount: 1, card: '$input.card' } },
          {
            parallel: [
              { tool: 'pay', args: { amount: 2, card: '$input.other' } },
              { tool: 'dura.sleep', args: { seconds: 1 } },
            ],
          },
        ],
      },
      secrets: { input: ['extra.token'] },
    },
  ],
});
// Cold replay at every step (no kept continuation): each step runs the code again against the log.
const model = withCodeAgents({
  agents: [payCode, payClear],
  tools,
  continuations: createCodeContinuations({ max: 0 }),
  base: createModelRouter({
    scripted: createScriptedModel(),
    agents: createAgentModel({ agents: registry, tools }),
    tools,
  }),
});

/** The planner's sealing of a decision's secret argument fields (services/planner seal-request.ts). */
function seal(decision: Decision, scope: string): Decision {
  if (decision.kind !== 'tool_calls') return decision;
  const calls = decision.calls.map((call) =>
    call.tool === 'pay'
      ? {
          ...call,
          args: sealSecretFields(call.args, ['card.token'], box, scope, call.callId) as typeof call.args,
        }
      : call,
  );
  return { ...decision, calls };
}

const request = (
  runId: string,
  name: string,
  input: RunRequest['input'],
): RunRequest & { runId: string } => ({
  v: 1,
  runId,
  agent: { kind: 'agent', name },
  input,
});

describe('Model.inputSecrets', () => {
  it("tells a JSON agent's declared paths and its plan (parallel groups flattened), and a code agent's", () => {
    expect(model.inputSecrets?.({ name: 'pay-card' })).toEqual({
      declared: ['extra.token'],
      plan: [
        { tool: 'pay', args: { amount: 1, card: '$input.card' } },
        { tool: 'pay', args: { amount: 2, card: '$input.other' } },
        { tool: 'dura.sleep', args: { seconds: 1 } },
      ],
    });
    expect(model.inputSecrets?.({ name: 'pay-code', version: '1' })).toEqual({
      declared: ['card.token'],
      plan: [],
    });
    expect(model.inputSecrets?.({ name: 'pay-code', version: '2' })).toBeUndefined();
    expect(model.inputSecrets?.({ name: 'nobody' })).toBeUndefined();
  });

  it('refuses a malformed secret path in a definition', () => {
    const bad = {
      name: 'a',
      version: '1',
      model: { provider: 'scripted', steps: [] },
      secrets: { input: ['a..b'] },
    };
    expect(() => new AgentRegistry({ agents: [bad as never] })).toThrow(/empty segment/);
    expect(() => defineAgent({ ...payClear, secrets: { input: [''] } })).toThrow(/secret path is empty/);
  });
});

describe("a code agent's secret input", () => {
  it('reaches its calls sealed, and the run completes replaying every step cold', async () => {
    const token = box.seal('tok_1', 'code-1', 'card.token');
    const run = await simulateRun(request('code-1', 'pay-code', { amount: 5, card: { token } }), model, {
      seal,
    });
    expect(run.state.status).toBe('completed');
    const args = run.events.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data.args] : []));
    expect(args).toEqual([
      { amount: 5, card: { token } },
      { amount: 6, card: { token } },
    ]);
  });

  it('passed in clear (undeclared) is sealed in the calls, and they still match on replay', async () => {
    const run = await simulateRun(request('clear-1', 'pay-clear', { token: 'tok_2' }), model, { seal });
    expect(run.state.status, JSON.stringify(run.state.waiting)).toBe('completed');
    const args = run.events.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data.args] : []));
    expect(args.map((a) => isSecretEnvelope((a['card'] as { token: unknown }).token))).toEqual([true, true]);
  });

  it('typed as clear text in the input schema fails the run with a hint to use sealedSecret', async () => {
    const typedClear = defineAgent({
      name: 'pay-typed',
      version: '1',
      tools: ['pay'],
      input: z.object({ card: z.object({ token: z.string() }) }),
      secrets: { input: ['card.token'] },
      run: (ctx, input) => ctx.tool('pay', { amount: 1, card: input.card }),
    });
    const typed = withCodeAgents({ agents: [typedClear], tools, base: createScriptedModel() });
    const token = box.seal('tok_3', 'typed-1', 'card.token');
    const run = await simulateRun(request('typed-1', 'pay-typed', { card: { token } }), typed, { seal });
    expect(run.state.status).toBe('failed');
    expect(JSON.stringify(run.events.at(-1)?.data)).toMatch(
      /card\.token, reach the code sealed: type them `sealedSecret`/,
    );
  });
});
