import { describe, expect, it } from 'vitest';
import { generateText, stepCountIs } from 'ai';
import type { JsonObject } from '@dura/contracts';
import { defineAgent } from '@dura/code-agents';
import { SimRun } from '@dura/code-agents/testing';
import { durable, duraTools } from '../src/index';
import { scriptedModel, type ScriptedReply } from './scripted-language-model';

/** Asks for a refund, then answers with what the refund call returned. */
function refunder(last: string): ScriptedReply {
  if (last.startsWith('refund')) return { calls: [{ name: 'pay_refund', input: { order: 'o-1' } }] };
  return { text: `done: ${last}` };
}

const refunds: JsonObject[] = [];
const world = { tools: { 'pay.refund': (args: JsonObject) => (refunds.push(args), { refunded: true }) } };

const agent = (needsApproval: unknown) =>
  defineAgent({
    name: 'refunds',
    version: '1',
    tools: ['pay.refund'],
    run: async (ctx) => {
      const model = scriptedModel(refunder);
      const result = await generateText({
        model: durable(ctx, model),
        tools: duraTools(ctx, [{ name: 'pay.refund', needsApproval } as never]),
        stopWhen: stepCountIs(3),
        prompt: 'refund order o-1',
      });
      return result.text;
    },
  });

describe('duraTools with needsApproval', () => {
  it('given a tool that needs approval, when the model calls it, then the run waits on the call before the gateway runs it', async () => {
    const run = new SimRun(agent(true), world);
    const waiting = await run.drive();

    expect(waiting.kind).toBe('waiting');
    expect(waiting.state.waiting).toMatchObject({ kind: 'approval', callId: expect.any(String) });
    expect(run.toolCalls).toEqual([]);
  });

  it('given the call refused, when the run goes on, then the tool never runs and the model is told why', async () => {
    refunds.length = 0;
    const run = new SimRun(agent(true), world);
    await run.drive();
    run.signal('reject', { reason: 'over the limit' });
    const end = await run.drive();

    expect(end.state.status).toBe('completed');
    expect(end.state.output).toMatch(
      /^done: pay_refund=.*"refused":"pay\.refund \(step \d+\) was not approved: a human rejected it: over the limit"/,
    );
    expect(run.toolCalls).toEqual([]);
    expect(refunds).toEqual([]);
  });

  it('given the call approved, when the run goes on, then the gateway runs it once and the model sees its result', async () => {
    refunds.length = 0;
    const run = new SimRun(agent({ onTimeout: 'reject', timeoutSeconds: 3600 }), world);
    await run.drive();
    run.signal('approve', { approved: true });
    const end = await run.drive();

    expect(end.state.output).toMatch(/^done: pay_refund=.*"refunded":true/);
    expect(run.toolCalls).toEqual(['pay.refund']);
    expect(refunds).toEqual([{ order: 'o-1' }]);
  });

  it('given a malformed needsApproval, when the tools are made, then the run fails naming what was given', async () => {
    const end = await new SimRun(agent('yes'), world).drive();

    expect(end.state.error).toMatchObject({ code: 'agent_misuse' });
    expect(end.state.error?.message).toMatch(/pay\.refund's needsApproval is "yes"; give true, false or/);
  });
});
