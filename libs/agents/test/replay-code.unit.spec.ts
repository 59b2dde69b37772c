// Replay of code agents' runs, in memory: each run is written by the planner's own step (`plannerStep`)
// with the code agent served by `withCodeAgents`, as the planner serves it, then replayed with the same code
// (no divergence) and with changed code (the first divergent call, named).
import { describe, expect, it } from 'vitest';
import { defineAgent, type AnyCodeAgent, type Ctx } from '@dura/code-agents';
import type { RunEvent } from '@dura/contracts';
import type { EventDraft, RunState } from '@dura/core';
import { ToolRegistry } from '@dura/tools';
import {
  AgentRegistry,
  createAgentModel,
  createModelRouter,
  createScriptedModel,
  replayModelFor,
  replayRun,
  withCodeAgents,
} from '../src/index';
import { chargeSteps, scriptedRequest, simulateRun } from '../src/testing';
import { request, served, stepper } from './replay-code-support';

/** The world of these runs: each open wait is answered (a signal, a timer, a child's result) once. */
function world(state: RunState): EventDraft[] {
  const wait = state.waiting;
  if (!wait) return [];
  switch (wait.kind) {
    case 'signal':
      return [{ type: 'signal_received', data: { signalId: `s-${wait.waitId}`, name: wait.signal ?? '' } }];
    case 'timer':
      return [{ type: 'timer_fired', data: { waitId: wait.waitId } }];
    case 'child':
      return [
        {
          type: 'child_run_completed',
          data: { childRunId: wait.childRunId ?? '', status: 'completed', output: { child: 'done' } },
        },
      ];
    default:
      return [];
  }
}

interface Variant {
  /** The tool of step 2 (the original charges). */
  second?: string;
  /** Asks one more `ctx.uuid()` at the end. */
  extraUuid?: boolean;
  /** Asks `ctx.random()` where the original asks `ctx.now()`. */
  randomFirst?: boolean;
  /** Returns this instead of what the original returns. */
  output?: string;
}

/** A code agent using every primitive that has a record: values, fan-out, a signal, a sleep, a child run. */
function everything(variant: Variant = {}): AnyCodeAgent {
  return defineAgent({
    name: 'everything',
    version: '1',
    tools: ['pay.charge', 'pay.checked'],
    async run(ctx: Ctx) {
      const at = variant.randomFirst ? ctx.random() : ctx.now().getTime();
      const id = ctx.uuid();
      const roll = ctx.random();
      await ctx.tool('pay.charge', { amount: 1, id });
      await ctx.tool(variant.second ?? 'pay.charge', { amount: 2 });
      const [a, b] = await Promise.all([
        ctx.tool('pay.charge', { amount: 3 }),
        ctx.tool('pay.checked', { amount: 4 }),
      ]);
      const go = await ctx.waitForSignal('go', { timeout: 3600 });
      await ctx.sleep(30);
      const child = await ctx.invoke({ name: 'helper' }, { q: 1 });
      if (variant.extraUuid) ctx.uuid();
      if (variant.output !== undefined) return variant.output;
      return { at, id, roll, a, b, go: go.kind, child };
    },
  });
}

async function ranWith(agent: AnyCodeAgent, runId: string): Promise<RunEvent[]> {
  const run = await simulateRun(request(runId, agent.name), served([agent]), { before: world });
  expect(run.state.status).toBe('completed');
  return run.events;
}

describe('replay of a code agent run', () => {
  it('finds no divergence when re-run with the same code: values, fan-out, signal, sleep and child', async () => {
    const events = await ranWith(everything(), 'code-all');
    const types = new Set(events.map((e) => e.type));
    for (const type of ['signal_received', 'timer_fired', 'child_run_requested', 'child_run_completed'])
      expect(types, type).toContain(type);
    const model = replayModelFor(events, { codeAgents: [everything()] });
    const result = await replayRun({ events, model });
    expect(result).toMatchObject({ ok: true, checked: events.length });
    expect(result.decisions).toBe(events.filter((e) => isPlannerType(e.type)).length);
  });

  it('names the first divergent call of changed code: step, the recorded call and what the code asks now', async () => {
    const events = await ranWith(everything(), 'code-changed');
    const second = events.filter((e) => e.type === 'thought')[1]!;
    const model = replayModelFor(events, { codeAgents: [everything({ second: 'pay.checked' })] });
    const result = await replayRun({ events, model });
    expect(result).toMatchObject({
      ok: false,
      seq: second.seq,
      step: 2,
      reason: 'step 2: recorded pay.charge {"amount":2}, the code now asks pay.checked {"amount":2}',
      expected: { type: 'thought', data: { decision: { calls: [{ tool: 'pay.checked' }] } } },
      actual: { type: 'thought', data: { decision: { calls: [{ tool: 'pay.charge' }] } } },
    });
    expect(result.checked).toBe(events.indexOf(second));
  });

  it('names a value the code asks for that the step did not record', async () => {
    const events = await ranWith(everything(), 'code-extra-value');
    const last = events.filter((e) => e.type === 'thought').at(-1)!;
    const result = await replayRun({
      events,
      model: replayModelFor(events, { codeAgents: [everything({ extraUuid: true })] }),
    });
    expect(result).toMatchObject({
      ok: false,
      seq: last.seq,
      reason: 'step 7: recorded nothing more (value 1 of the step), the code now asks ctx.uuid()',
    });
  });

  it('names another ending: what the log recorded it finished with, and what the code returns now', async () => {
    const events = await ranWith(everything(), 'code-other-output');
    const last = events.filter((e) => e.type === 'thought').at(-1)!;
    const result = await replayRun({
      events,
      model: replayModelFor(events, { codeAgents: [everything({ output: 'changed' })] }),
    });
    expect(result).toMatchObject({ ok: false, seq: last.seq, step: 7 });
    expect(result.ok ? '' : result.reason).toMatch(
      /^step 7: recorded to finish with \{"a":\{.*\}, the code now asks to finish with "changed"$/,
    );
  });

  it('names a recorded value the code now asks for as another kind (the engine refuses to guess)', async () => {
    const events = await ranWith(everything(), 'code-other-value');
    const first = events.find((e) => e.type === 'thought')!;
    const result = await replayRun({
      events,
      model: replayModelFor(events, { codeAgents: [everything({ randomFirst: true })] }),
    });
    expect(result).toMatchObject({ ok: false, seq: first.seq, step: 1 });
    expect(result.ok ? '' : result.reason).toMatch(
      /^step 1: non-determinism at step 1 of everything@1 .*the log recorded ctx\.now\(\), the code now asks for ctx\.random\(\)/,
    );
  });

  it('refuses to replay without the code, or with code that lacks the pinned version, saying what to pass', async () => {
    const events = await ranWith(everything(), 'code-missing');
    await expect(replayRun({ events })).rejects.toMatchObject({
      code: 'code_agent_not_given',
      message: expect.stringMatching(/run code-missing ran code agent everything@1: .*--agents <module>/),
    });
    const other = defineAgent({ ...everything(), version: '2' });
    const model = replayModelFor(events, { codeAgents: [other] });
    await expect(replayRun({ events, model })).rejects.toMatchObject({ code: 'code_agent_not_given' });
  });
});

describe('replay of a run whose code changed while it ran', () => {
  it('names the stop the planner recorded, with the old code and with the new', async () => {
    const before = await simulateRun(request('code-swapped', 'stepper'), served([stepper('pay.charge')]));
    expect(before.state.waiting?.kind).toBe('signal');
    // The planner now serves other code under the same version: at step 1 it asks pay.checked.
    const after = await simulateRun(request('code-swapped', 'stepper'), served([stepper('pay.checked')]), {
      start: before.events,
      before: (state) =>
        state.waiting?.kind === 'signal'
          ? [{ type: 'signal_received', data: { signalId: 'go-1', name: 'go' } }]
          : [],
    });
    expect(after.state.waiting?.kind).toBe('operator');
    const events = after.events;
    const first = events.find((e) => e.type === 'thought')!;
    const stop = events.find((e) => e.type === 'wait_requested' && e.data.kind === 'operator')!;

    // The new code differs from the log at its first step already.
    const changed = await replayRun({
      events,
      model: replayModelFor(events, { codeAgents: [stepper('pay.checked')] }),
    });
    expect(changed).toMatchObject({
      ok: false,
      seq: first.seq,
      step: 1,
      reason: 'step 1: recorded pay.charge {"amount":1}, the code now asks pay.checked {"amount":1}',
    });
    // The code the run started with agrees with every step, up to where the planner stopped it.
    const original = await replayRun({
      events,
      model: replayModelFor(events, { codeAgents: [stepper('pay.charge')] }),
    });
    expect(original).toMatchObject({ ok: false, seq: stop.seq, step: 3 });
    expect(original.ok ? '' : original.reason).toMatch(
      /^step 3: the log stopped the code here \(non-determinism at step 1 .*pay\.charge.*pay\.checked.*\); the code now asks to finish with "done"$/,
    );

    // The operator serves the original code again and signals retry: the run finishes. Replayed with that
    // code, the stop is an operator-resolved input, not a divergence.
    const retried = await simulateRun(request('code-swapped', 'stepper'), served([stepper('pay.charge')]), {
      start: [...events],
      before: (state) =>
        state.waiting?.kind === 'operator'
          ? [{ type: 'signal_received', data: { signalId: 'retry-1', name: 'retry' } }]
          : [],
    });
    expect(retried.state.status).toBe('completed');
    const finished = await replayRun({
      events: retried.events,
      model: replayModelFor(retried.events, { codeAgents: [stepper('pay.charge')] }),
    });
    expect(finished).toMatchObject({ ok: true, checked: retried.events.length });
    // The code that stopped it still diverges where it did.
    const stopping = await replayRun({
      events: retried.events,
      model: replayModelFor(retried.events, { codeAgents: [stepper('pay.checked')] }),
    });
    expect(stopping).toMatchObject({ ok: false, seq: first.seq });
  });
});

describe('replay with a module of code agents and JSON agents', () => {
  it('replays scripted plans and JSON agents as without code agents, and code runs with their code', async () => {
    const registry = new AgentRegistry({
      agents: [
        {
          name: 'json-stepper',
          version: '1',
          tools: ['pay.charge'],
          model: { provider: 'scripted', steps: [{ tool: 'pay.charge', args: { amount: 7 } }] },
        },
      ],
    });
    const agents = [everything()];
    const planner = withCodeAgents({
      agents,
      base: createModelRouter({
        scripted: createScriptedModel(),
        agents: createAgentModel({ agents: registry, tools: new ToolRegistry([]), env: {} }),
      }),
    });
    const runs = [
      request('mixed-json', 'json-stepper'),
      scriptedRequest('mixed-plan', chargeSteps(2)),
      request('mixed-code', 'everything'),
    ];
    for (const r of runs) {
      const { events, state } = await simulateRun(r, planner, { before: world });
      expect(state.status, r.runId).toBe('completed');
      const model = replayModelFor(events, { agents: registry, codeAgents: agents });
      expect(await replayRun({ events, model }), r.runId).toMatchObject({ ok: true, checked: events.length });
    }
  });
});

const PLANNER_TYPES = new Set([
  'run_started',
  'budget_reserved',
  'budget_exceeded',
  'context_summarized',
  'thought',
  'tool_call_requested',
  'wait_requested',
  'child_run_requested',
  'run_completed',
  'run_failed',
  'run_cancelled',
]);

function isPlannerType(type: string): boolean {
  return PLANNER_TYPES.has(type);
}
