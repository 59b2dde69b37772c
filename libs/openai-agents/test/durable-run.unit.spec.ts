import { describe, expect, it } from 'vitest';
import { Agent, handoff, tool, type ModelProvider } from '@openai/agents';
import * as z from 'zod';
import type { JsonObject } from '@dura/contracts';
import { defineAgent, type Ctx } from '@dura/code-agents';
import { decodeJournal } from '@dura/code-agents/engine';
import { SimRun, type World } from '@dura/code-agents/testing';
import { durableRun, duraTools, duraModelProvider } from '../src/index';
import { scriptedModel, type ScriptedModel, type ScriptedTurn } from './scripted-model';

const TOOLS = ['pay.charge', 'notes.save', 'pay.refund'];

/** Triage hands off to billing, which charges and notes at once, refunds (approved first), and answers. */
function billingScript(results: number): ScriptedTurn {
  if (results === 0) return { calls: [{ name: 'transfer_to_billing', input: {} }] };
  if (results === 1)
    return {
      calls: [
        { name: 'pay_charge', input: { amount: 5 } },
        { name: 'notes_save', input: { text: 'charged 5' } },
      ],
    };
  if (results === 3) return { calls: [{ name: 'pay_refund', input: { amount: 3 } }] };
  if (results === 4) return { text: 'Charged 5, refunded 3.' };
  throw new Error(`unexpected turn after ${results} results`);
}

const world = (live: boolean): World => ({
  live,
  tools: {
    'pay.charge': (args: JsonObject) => ({ charged: args['amount'] ?? null }),
    'notes.save': () => ({ saved: true }),
    'pay.refund': (args: JsonObject) => ({ refunded: args['amount'] ?? null }),
  },
});

const providerOf = (model: ScriptedModel): ModelProvider => ({ getModel: () => model });

function billingAgent(model: ScriptedModel, stream: boolean) {
  return defineAgent({
    name: 'agents-billing',
    version: '1',
    tools: TOOLS,
    run: async (ctx: Ctx) => {
      const billing = new Agent({
        name: 'billing',
        model: 'fake-gpt',
        instructions: 'Charge, note, refund.',
        tools: duraTools(ctx, ['pay.charge', 'notes.save', { name: 'pay.refund', needsApproval: true }]),
      });
      const triage = new Agent({ name: 'triage', model: 'fake-gpt', handoffs: [handoff(billing)] });
      const result = await durableRun(ctx, triage, 'refund order 7', { provider: providerOf(model), stream });
      return { text: result.finalOutput ?? null, last: result.lastAgent?.name ?? null };
    },
  });
}

describe('an Agents SDK agent over the durable runner', () => {
  for (const [live, stream] of [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ] as const)
    it(`given two agents with a handoff and three Dura tools, one needing approval, when driven ${live ? 'by a kept execution' : 'by replay'}${stream ? ', streaming' : ''}, then each model call is made once, each tool runs once, the approval waits, and the handoff is marked`, async () => {
      const model = scriptedModel(billingScript);
      const run = new SimRun(billingAgent(model, stream), world(live));
      const waiting = await run.drive();
      expect(waiting.kind, JSON.stringify([waiting.state.error ?? waiting.state.status, model.asked])).toBe(
        'waiting',
      );
      expect(run.toolCalls).toEqual(['pay.charge', 'notes.save']);

      run.signal('approve.pay_refund', { approved: true });
      const end = await run.drive();
      expect(end.state.status).toBe('completed');
      expect(end.state.output).toEqual({ text: 'Charged 5, refunded 3.', last: 'billing' });
      expect(run.toolCalls).toEqual(['pay.charge', 'notes.save', 'pay.refund']);
      expect(model.asked).toEqual(
        [0, 1, 3, 4].map((results) => ({ mode: stream ? 'stream' : 'response', results })),
      );
      const entries = run.events.flatMap((e) => (e.type === 'thought' ? decodeJournal(e.data.content) : []));
      expect(entries.filter((e) => e.k === 'mark')).toEqual([{ k: 'mark', v: 'handoff: triage → billing' }]);
      expect(entries.filter((e) => e.k === 'model')).toHaveLength(4);
      expect(end.state.usage).toEqual({ inputTokens: 40, outputTokens: 20 });
    });

  it('given a refused approval, when the run goes on, then the model is told and the refund never runs', async () => {
    const model = scriptedModel(billingScript);
    const run = new SimRun(billingAgent(model, false), world(false));
    await run.drive();
    run.signal('approve.pay_refund', { approved: false, reason: 'too late' });
    const end = await run.drive();
    expect(end.state.status).toBe('completed');
    expect(run.toolCalls).toEqual(['pay.charge', 'notes.save']);
  });

  it('given a function tool with an execute of its own, when run, then it is refused before any model call', async () => {
    const model = scriptedModel(billingScript);
    const own = tool({ name: 'own', description: 'x', parameters: z.object({}), execute: () => 'done' });
    const agent = defineAgent({
      name: 'agents-own-tool',
      version: '1',
      tools: TOOLS,
      run: async (ctx: Ctx) => {
        const solo = new Agent({ name: 'solo', model: 'fake-gpt', tools: [own] });
        return (await durableRun(ctx, solo, 'hi', { provider: providerOf(model) })).finalOutput ?? null;
      },
    });
    const end = await new SimRun(agent, world(false)).drive();
    expect(end.state.status).toBe('failed');
    expect(end.state.error?.message).toMatch(/function tool "own", which would run in this process/);
    expect(model.asked).toEqual([]);
  });

  it('given no Dura execution, when a durable runner, model provider or tool is made, then each fails loudly', async () => {
    const model = scriptedModel(billingScript);
    const solo = new Agent({ name: 'solo', model: 'fake-gpt' });
    await expect(durableRun({} as Ctx, solo, 'hi', { provider: providerOf(model) })).rejects.toThrow(
      /needs the ctx of a Dura code agent/,
    );
    expect(() => duraModelProvider(undefined as unknown as Ctx, providerOf(model))).toThrow(
      /not_in_execution|needs the ctx/,
    );
    expect(() => duraTools(null as unknown as Ctx, ['pay.charge'])).toThrow(/needs the ctx/);
    expect(model.asked).toEqual([]);
  });
});
