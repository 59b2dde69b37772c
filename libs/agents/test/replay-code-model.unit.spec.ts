// Replay of code agents that ask the model, in memory: each run is written by the planner's own step
// (`plannerStep`) with `withCodeAgents` answering ctx.model in process, then replayed with no model asked.
// Metered runs: the reservations, budget waits and refusals the planner recorded are re-derived through the
// same gate, and a changed, missing or unrecorded call is named where it first shows.
import { describe, expect, it } from 'vitest';
import { defineAgent, type ModelAnswer } from '@dura/code-agents';
import { DuraError, type JsonObject } from '@dura/contracts';
import type { EventDraft, RunState } from '@dura/core';
import { defineTool, ToolRegistry } from '@dura/tools';
import * as z from 'zod';
import { AgentRegistry, createScriptedModel, replayModelFor, replayRun, withCodeAgents } from '../src/index';
import { simulateRun } from '../src/testing';
import { request, served } from './replay-code-support';

describe('replay of a code agent that calls ctx.model', () => {
  const answer = (q: JsonObject): ModelAnswer => ({
    content: `answer to ${JSON.stringify(q)}`,
    usage: { inputTokens: 10, outputTokens: 3 },
    model: { id: 'fake-1', promptVersion: 'p1' },
    finishReason: 'stop',
    costUsd: 0.001,
  });
  /** Metered (`budget`) unless told: the planner reserves before each step's first ctx.model call. */
  const asker = (topic: string, metered = true) =>
    defineAgent({
      name: 'asker',
      version: '1',
      model: { provider: 'openai', model: 'fake-1', maxTokens: 50 },
      tools: ['pay.charge'],
      ...(metered ? { budget: { maxCostUsd: 1, maxTokens: 100_000 } } : {}),
      async run(ctx) {
        const plan = await ctx.model({ prompt: `plan ${topic}` });
        await ctx.tool('pay.charge', { amount: plan.content.length });
        const [x, y] = await Promise.all([ctx.model({ prompt: 'x' }), ctx.model({ prompt: 'y' })]);
        return { plan: plan.content, x: x.content, y: y.content };
      },
    });

  it('answers every ctx.model from the journal the thought recorded: no model is asked, no divergence', async () => {
    const asked: JsonObject[] = [];
    const run = await simulateRun(
      request('code-model', 'asker'),
      served([asker('trip')], (q) => (asked.push(q), answer(q))),
    );
    expect(run.state.status).toBe('completed');
    expect(asked).toHaveLength(3);
    const thoughts = run.events.flatMap((e) => (e.type === 'thought' ? [e.data] : []));
    expect(thoughts[0]?.content).toContain('"k":"model"');
    expect(thoughts.at(-1)).toMatchObject({ usage: { inputTokens: 20, outputTokens: 6 }, costUsd: 0.002 });
    // A metered budget: the planner reserved before each step's first call (steps 1 and 2), and replay
    // re-derives those reservations through the same gate.
    const reserved = run.events.filter((e) => e.type === 'budget_reserved');
    expect(reserved).toHaveLength(2);
    for (const r of reserved) expect(r.data).toMatchObject({ tokens: expect.any(Number), costUsd: 0 });

    // The replay model has no `answer`: a question the journal does not hold could not be answered.
    const result = await replayRun({
      events: run.events,
      model: replayModelFor(run.events, { codeAgents: [asker('trip')] }),
    });
    expect(result).toMatchObject({ ok: true, checked: run.events.length });
    expect(asked).toHaveLength(3);
  });

  it('names a model call the step did not record (no model is asked for it)', async () => {
    const run = await simulateRun(request('code-model-more', 'asker'), served([asker('trip')], answer));
    const extra = defineAgent({
      ...asker('trip'),
      async run(ctx) {
        const plan = await ctx.model({ prompt: 'plan trip' });
        const again = await ctx.model({ prompt: 'plan again' });
        await ctx.tool('pay.charge', { amount: plan.content.length + again.content.length });
        return null;
      },
    });
    const first = run.events.find((e) => e.type === 'thought')!;
    const result = await replayRun({
      events: run.events,
      model: replayModelFor(run.events, { codeAgents: [extra] }),
    });
    expect(result).toMatchObject({ ok: false, seq: first.seq, step: 1 });
    expect(result.ok ? '' : result.reason).toMatch(
      /^step 1: non-determinism at step 1 of asker@1 \(run code-model-more\): the log recorded nothing more \(value 2 of the step\), the code now asks for ctx\.model \(request [0-9a-f]{12}\)\. /,
    );
    // The step's recorded call was let through the gate as the planner does: its reservation agreed.
    const reservation = run.events.find((e) => e.type === 'budget_reserved')!;
    expect(reservation.seq).toBeLessThan(first.seq);
  });

  it('names the model request that changed at a recorded position', async () => {
    const pattern =
      /^step 1: non-determinism at step 1 of asker@1 .*the log recorded ctx\.model \(request [0-9a-f]{12}\), the code now asks for ctx\.model \(request [0-9a-f]{12}\)/;
    // Unmetered: the step's thought is the first event the changed request touches.
    const plain = await simulateRun(
      request('code-model-changed-plain', 'asker'),
      served([asker('trip', false)], answer),
    );
    expect(plain.events.some((e) => e.type === 'budget_reserved')).toBe(false);
    const thought = plain.events.find((e) => e.type === 'thought')!;
    const unmetered = await replayRun({
      events: plain.events,
      model: replayModelFor(plain.events, { codeAgents: [asker('holiday', false)] }),
    });
    expect(unmetered).toMatchObject({ ok: false, seq: thought.seq, step: 1 });
    expect(unmetered.ok ? '' : unmetered.reason).toMatch(pattern);

    // Metered: the reservation before the call is, and the changed call is named there (not its worst case).
    const run = await simulateRun(request('code-model-changed', 'asker'), served([asker('trip')], answer));
    const reservation = run.events.find((e) => e.type === 'budget_reserved')!;
    expect(reservation.seq).toBeLessThan(run.events.find((e) => e.type === 'thought')!.seq);
    const result = await replayRun({
      events: run.events,
      model: replayModelFor(run.events, { codeAgents: [asker('holiday')] }),
    });
    expect(result).toMatchObject({
      ok: false,
      seq: reservation.seq,
      step: 1,
      actual: { type: 'budget_reserved' },
      expected: { type: 'wait_requested', data: { kind: 'operator' } },
    });
    expect(result.ok ? '' : result.reason).toMatch(pattern);
  });
});

describe('replay of a code agent whose ctx.model calls are budgeted', () => {
  const answer = (): ModelAnswer => ({
    content: 'fine',
    usage: { inputTokens: 10, outputTokens: 3 },
    model: { id: 'fake-1', promptVersion: 'p1' },
    finishReason: 'stop',
  });
  /** Two steps of one call each; `ask` false: the same calls without asking the model. */
  const budgeted = (maxTokens: number, ask = true) =>
    defineAgent({
      name: 'budgeted',
      version: '1',
      model: { provider: 'openai', model: 'fake-1', maxTokens: 50 },
      tools: ['pay.charge'],
      budget: { maxTokens },
      onBudgetExceeded: 'wait',
      async run(ctx) {
        for (const n of [1, 2]) {
          const { content } = ask ? await ctx.model({ prompt: `step ${n}` }) : { content: 'fine' };
          await ctx.tool('pay.charge', { amount: n, content });
        }
        return 'done';
      },
    });
  const raise = (state: RunState): EventDraft[] =>
    state.waiting?.kind === 'budget'
      ? [
          {
            type: 'signal_received',
            data: { signalId: 'raise-1', name: 'raise_budget', payload: { maxTokens: 1000 } },
          },
        ]
      : [];

  it('re-derives the budget_exceeded and the wait of a call over budget, and the reservation after the raise', async () => {
    // Each call's worst case is 60 tokens (50 + its prompt); step 1 spends 13, so step 2's call passes 70.
    const run = await simulateRun(request('code-over-budget', 'budgeted'), served([budgeted(70)], answer), {
      before: raise,
    });
    expect(run.state.status).toBe('completed');
    const types = run.events.map((e) => e.type);
    expect(types.filter((t) => t === 'budget_exceeded')).toHaveLength(1);
    expect(types.filter((t) => t === 'budget_reserved')).toHaveLength(2);
    expect(types.indexOf('budget_exceeded')).toBeLessThan(types.lastIndexOf('budget_reserved'));
    const model = replayModelFor(run.events, { codeAgents: [budgeted(70)] });
    expect(await replayRun({ events: run.events, model })).toMatchObject({
      ok: true,
      checked: run.events.length,
    });
    // Another limit in the code's budget shows where the gate now decides otherwise.
    const looser = await replayRun({
      events: run.events,
      model: replayModelFor(run.events, { codeAgents: [budgeted(500)] }),
    });
    expect(looser).toMatchObject({ ok: false, seq: run.events.find((e) => e.type === 'run_started')!.seq });
  });

  it('re-derives a step stopped by its budget between two model calls, decided again from its first call', async () => {
    // One step, two calls (worst case 60 tokens each, 13 spent each): the second passes 70; raised to 71,
    // the step's first call fits again but both do not; raised to 1000, the step is decided.
    const twice = defineAgent({
      ...budgeted(70),
      async run(ctx) {
        const first = await ctx.model({ prompt: 'first' });
        const second = await ctx.model({ prompt: 'second' });
        await ctx.tool('pay.charge', { amount: 1, content: first.content + second.content });
        return 'done';
      },
    });
    const asked: string[] = [];
    let raises = 0;
    const run = await simulateRun(
      request('code-between-calls', 'budgeted'),
      served(
        [twice],
        (q) => (asked.push(String((q['messages'] as { content: string }[])[0]?.content)), answer()),
      ),
      {
        before: (state) => {
          if (state.waiting?.kind !== 'budget') return [];
          raises += 1;
          const payload = { maxTokens: raises === 1 ? 71 : 1000 };
          return [
            { type: 'signal_received', data: { signalId: `raise-${raises}`, name: 'raise_budget', payload } },
          ];
        },
      },
    );
    expect(run.state.status).toBe('completed');
    expect(run.events.filter((e) => e.type === 'budget_exceeded')).toHaveLength(2);
    // The first call's answer was never recorded: each decision of the step asked it again.
    expect(asked).toEqual(['first', 'first', 'first', 'second']);
    const model = replayModelFor(run.events, { codeAgents: [twice] });
    expect(await replayRun({ events: run.events, model })).toMatchObject({
      ok: true,
      checked: run.events.length,
    });
  });

  it('prices the reservation with the agents file: another price shows at budget_reserved', async () => {
    const prices = { 'fake-1': { inputPerMTokUsd: 1_000, outputPerMTokUsd: 1_000 } };
    const agents = [budgeted(1000)];
    const planner = withCodeAgents({
      agents,
      base: createScriptedModel(),
      prices,
      answer: () => Promise.resolve(answer()),
    });
    const run = await simulateRun(request('code-priced', 'budgeted'), planner);
    expect(run.state.status).toBe('completed');
    const reservation = run.events.find((e) => e.type === 'budget_reserved')!;
    expect(reservation.type === 'budget_reserved' && reservation.data.costUsd).toBeGreaterThan(0);
    const registry = (p: typeof prices) => new AgentRegistry({ agents: [], prices: p });
    const same = await replayRun({
      events: run.events,
      model: replayModelFor(run.events, { agents: registry(prices), codeAgents: agents }),
    });
    expect(same).toMatchObject({ ok: true, checked: run.events.length });
    const dearer = { 'fake-1': { inputPerMTokUsd: 2_000, outputPerMTokUsd: 2_000 } };
    const repriced = await replayRun({
      events: run.events,
      model: replayModelFor(run.events, { agents: registry(dearer), codeAgents: agents }),
    });
    expect(repriced).toMatchObject({ ok: false, seq: reservation.seq });
    expect(repriced.ok ? '' : repriced.reason).toBe(
      'the recorded budget_reserved differs from what the planner decides now at data.costUsd',
    );
  });

  it('replays a run the provider refused: the step fails with the recorded reason, as on the run', async () => {
    const refusing = withCodeAgents({
      agents: [budgeted(1000)],
      base: createScriptedModel(),
      answer: (request) =>
        request.messages.at(-1)?.content === 'step 2'
          ? Promise.reject(new DuraError('model_request_rejected', 'the provider answered 400: too long'))
          : Promise.resolve(answer()),
    });
    const run = await simulateRun(request('code-refused', 'budgeted'), refusing);
    expect(run.state.status).toBe('failed');
    expect(run.events.map((e) => e.type).slice(-2)).toEqual(['budget_reserved', 'run_failed']);
    const model = replayModelFor(run.events, { codeAgents: [budgeted(1000)] });
    expect(await replayRun({ events: run.events, model })).toMatchObject({
      ok: true,
      checked: run.events.length,
    });
  });

  it('replays a call that offers tools to the model with the tools given, whose schemas its worst case counts', async () => {
    const charge = defineTool({
      name: 'pay.charge',
      description: 'charges a card',
      input: z.object({ amount: z.number() }),
      safety: 'idempotent',
      execute: () => Promise.resolve(null),
    });
    const tools = new ToolRegistry([charge]);
    const offering = defineAgent({
      name: 'offering',
      version: '1',
      model: { provider: 'openai', model: 'fake-1', maxTokens: 50 },
      tools: ['pay.charge'],
      budget: { maxTokens: 10_000 },
      async run(ctx) {
        const { content } = await ctx.model({ prompt: 'charge?', tools: ['pay.charge'] });
        return content;
      },
    });
    const planner = withCodeAgents({
      agents: [offering],
      base: createScriptedModel(),
      tools,
      answer: () => Promise.resolve(answer()),
    });
    const run = await simulateRun(request('code-offering', 'offering'), planner);
    expect(run.state.status).toBe('completed');
    const reservation = run.events.find((e) => e.type === 'budget_reserved')!;
    const withTools = replayModelFor(run.events, { codeAgents: [offering], tools });
    expect(await replayRun({ events: run.events, model: withTools })).toMatchObject({
      ok: true,
      checked: run.events.length,
    });
    // Without the tools the worst case cannot be computed: the planner would fail the run there.
    const without = await replayRun({
      events: run.events,
      model: replayModelFor(run.events, { codeAgents: [offering] }),
    });
    expect(without).toMatchObject({
      ok: false,
      seq: reservation.seq,
      expected: { type: 'run_failed', data: { error: { code: 'model_request_rejected' } } },
    });
  });

  it('names a step that no longer asks the model where the log reserved for its call, and the reverse', async () => {
    const run = await simulateRun(request('code-no-call', 'budgeted'), served([budgeted(1000)], answer));
    const reservation = run.events.find((e) => e.type === 'budget_reserved')!;
    const without = await replayRun({
      events: run.events,
      model: replayModelFor(run.events, { codeAgents: [budgeted(1000, false)] }),
    });
    expect(without).toMatchObject({ ok: false, seq: reservation.seq, step: 1 });
    expect(without.ok ? '' : without.reason).toBe(
      'step 1: the log reserved the budget for a ctx.model call here, the code now asks pay.charge {"amount":1,"content":"fine"} without one',
    );

    const plain = await simulateRun(request('code-no-call-2', 'budgeted'), served([budgeted(1000, false)]));
    const thought = plain.events.find((e) => e.type === 'thought')!;
    const withCall = await replayRun({
      events: plain.events,
      model: replayModelFor(plain.events, { codeAgents: [budgeted(1000)] }),
    });
    expect(withCall).toMatchObject({ ok: false, seq: thought.seq, step: 1 });
    // The step recorded no call: named before the gate, so nothing is reserved for it.
    expect(withCall.ok ? '' : withCall.reason).toMatch(
      /^step 1: non-determinism at step 1 of budgeted@1 \(run code-no-call-2\): the log recorded nothing more \(value 1 of the step\), the code now asks for ctx\.model \(request [0-9a-f]{12}\)\. /,
    );
  });
});
