import { describe, expect, it } from 'vitest';
import { defineAgent, type AgentDefinition, type AnyCodeAgent } from '@dura/code-agents';
import {
  decodeJournal,
  startExecution,
  withModelAnswer,
  type CodeStep,
  type ResolvedModelRequest,
} from '@dura/code-agents/engine';
import { CANCEL_SIGNAL, type RunState } from '@dura/core';
import {
  createCodeContinuations,
  createScriptedModel,
  withCodeAgents,
  type CodeContinuations,
} from '../src/index';
import { agentRequest, CodeRunLog } from './code-run-log';

/**
 * `steps` calls of `echo`, each with a fresh random number in its arguments: a replica that kept values the
 * log did not record would ask for other arguments at a recorded position. `starts` counts how often `run`
 * was executed from its first line.
 */
const starts = new WeakMap<AnyCodeAgent, number>();
const startsOf = (agent: AnyCodeAgent): number => starts.get(agent) ?? 0;

function countedAgent(steps: number, name = 'counted'): AnyCodeAgent {
  const agent: AnyCodeAgent = defineAgent({
    name,
    version: '1',
    tools: ['echo'],
    async run(ctx) {
      starts.set(agent, startsOf(agent) + 1);
      let sum = 0;
      for (let i = 1; i <= steps; i += 1) {
        const tag = Math.floor(ctx.random() * 1e9);
        await ctx.tool('echo', { i, tag });
        sum += i;
      }
      return { sum };
    },
  });
  return agent;
}

const MODEL = { provider: 'openai', model: 'fake-1' } as const;

/** Three steps, each asking the model (after reading the clock) and echoing the answer. */
function countedAsker(
  budget: Pick<AgentDefinition<unknown, unknown>, 'budget' | 'onBudgetExceeded'> = {},
): AnyCodeAgent {
  const agent: AnyCodeAgent = defineAgent({
    name: 'asker',
    version: '1',
    ...budget,
    model: MODEL,
    tools: ['echo'],
    async run(ctx) {
      starts.set(agent, startsOf(agent) + 1);
      for (let i = 1; i <= 3; i += 1) {
        const at = ctx.now().getTime();
        const { content } = await ctx.model({ prompt: `question ${i}` });
        await ctx.tool('echo', { content, at });
      }
      return { answers: 3 };
    },
  });
  return agent;
}

const FRESH = { now: () => Date.UTC(2026, 0, 1), random: () => 0.5, uuid: () => 'uuid-1' };

function replica(agent: AnyCodeAgent, continuations: CodeContinuations = createCodeContinuations()) {
  return {
    model: withCodeAgents({ agents: [agent], base: createScriptedModel(), continuations }),
    continuations,
  };
}

function completedSum(state: RunState, steps: number): void {
  expect(state.waiting?.kind, state.waiting?.reason).not.toBe('operator');
  expect(state.status).toBe('completed');
  expect(state.output).toEqual({ sum: (steps * (steps + 1)) / 2 });
}

describe('suspended continuations of code-agent runs', () => {
  it('runs the code of a 50-step agent once when its continuation is kept, and at every step without', async () => {
    const agent = countedAgent(50);
    const { model, continuations } = replica(agent);
    const state = await new CodeRunLog(agentRequest('warm-50', 'counted')).drive(model);
    completedSum(state, 50);
    expect(startsOf(agent)).toBe(1);
    expect(continuations.stats.cold).toBe(1);
    expect(continuations.stats.warm).toBe(50);
    // The completion ended the code: nothing is kept for the run.
    expect(continuations.size).toBe(0);

    const uncached = countedAgent(50);
    const cold = await new CodeRunLog(agentRequest('cold-50', 'counted')).drive(
      replica(uncached, createCodeContinuations({ max: 0 })).model,
    );
    completedSum(cold, 50);
    expect(startsOf(uncached)).toBe(51);
  });

  it('replays cold after losing the append race to another replica, where the kept execution would block', async () => {
    const agent = countedAgent(20);
    const a = replica(agent);
    const b = replica(agent);
    const log = new CodeRunLog(agentRequest('lost-race', 'counted'));
    await log.drive(a.model, 9);
    const mine = await log.nextDecision(a.model); // decided, never recorded: B appends first
    const atStepTen = log.state;
    const theirs = await log.nextDecision(b.model);
    theirs.forEach((draft) => log.add(draft));
    expect(mine).not.toEqual(theirs);
    expect(startsOf(agent)).toBe(2);

    // The hazard is real: an execution that drew its own random number at step 10 finds another call
    // recorded at that position once B's step is in the log.
    const probe = startExecution(agent, 'lost-race');
    expect((await probe.advance(atStepTen, { fresh: FRESH })).kind).toBe('decide');
    await log.nextDecision(b.model);
    const stale = await probe.advance(log.state, { fresh: FRESH });
    expect(stale.kind).toBe('blocked');

    completedSum(await log.drive(a.model), 20);
    expect(a.continuations.stats.cold).toBe(2);
    // A, B, the probe, and A once more after the race it lost; then A's new execution ran to the end.
    expect(startsOf(agent)).toBe(4);
  });

  it('replays cold after losing the append race to a signal', async () => {
    const agent = countedAgent(20);
    const { model, continuations } = replica(agent);
    const log = new CodeRunLog(agentRequest('lost-to-signal', 'counted'));
    await log.drive(model, 9);
    await log.nextDecision(model);
    log.add({ type: 'signal_received', data: { signalId: 'noise-1', name: 'noise' } });
    completedSum(await log.drive(model), 20);
    expect(startsOf(agent)).toBe(2);
    expect(continuations.stats.cold).toBe(2);
  });

  it('goes on warm after another replica recorded several steps after its own, and cold if its own was not kept', async () => {
    const agent = countedAgent(30);
    const a = replica(agent);
    const b = replica(agent);
    const log = new CodeRunLog(agentRequest('advanced-elsewhere', 'counted'));
    await log.drive(a.model, 10);
    await log.drive(b.model, 20);
    expect(startsOf(agent)).toBe(2);
    completedSum(await log.drive(a.model), 30);
    // A found its step 10 in the log as it returned it and replayed B's ten steps through its execution.
    expect(startsOf(agent)).toBe(2);
    expect(a.continuations.stats.cold).toBe(1);

    const again = countedAgent(30);
    const c = replica(again);
    const d = replica(again);
    const other = new CodeRunLog(agentRequest('lost-then-advanced', 'counted'));
    await other.drive(c.model, 9);
    await other.nextDecision(c.model);
    await other.drive(d.model, 20);
    completedSum(await other.drive(c.model), 30);
    expect(startsOf(again)).toBe(3);
  });

  it('drops an execution that blocked, threw or finished, and the run of a cancelled run', async () => {
    const stuck = defineAgent({
      name: 'stuck',
      version: '1',
      tools: ['echo'],
      async run(ctx) {
        await ctx.tool('echo', { n: 1 });
        await new Promise(() => undefined); // not through ctx: the log can never drive it
        return 'done';
      },
    });
    const blocked = replica(stuck);
    const log = new CodeRunLog(agentRequest('stuck', 'stuck'));
    await log.drive(blocked.model, 1);
    expect(blocked.continuations.size).toBe(1);
    await log.drive(blocked.model);
    expect(log.state.waiting?.kind).toBe('operator');
    expect(blocked.continuations.size).toBe(0);

    const asker = defineAgent({
      name: 'asker',
      version: '1',
      model: MODEL,
      tools: ['echo'],
      async run(ctx) {
        await ctx.tool('echo', { n: 1 });
        await ctx.model({ prompt: 'hello' });
        return 'done';
      },
    });
    const continuations = createCodeContinuations();
    const failing = withCodeAgents({
      agents: [asker],
      base: createScriptedModel(),
      continuations,
      answer: () => Promise.reject(new Error('the provider is down')),
    });
    const asked = new CodeRunLog(agentRequest('asker', 'asker'));
    await asked.drive(failing, 1);
    expect(continuations.size).toBe(1);
    await expect(asked.drive(failing)).rejects.toThrow('the provider is down');
    expect(continuations.size).toBe(0);

    const agent = countedAgent(20);
    const { model, continuations: kept } = replica(agent);
    const cancelled = new CodeRunLog(agentRequest('cancelled', 'counted'));
    await cancelled.drive(model, 5);
    expect(kept.size).toBe(1);
    cancelled.add({ type: 'signal_received', data: { signalId: 'stop-1', name: CANCEL_SIGNAL } });
    await cancelled.drive(model);
    expect(cancelled.state.status).toBe('cancelled');
    expect(kept.size).toBe(0);
  });

  it('keeps at most `max` runs, drops idle ones, and replays an evicted run cold', async () => {
    let now = 0;
    const continuations = createCodeContinuations({ max: 2, idleMs: 60_000, now: () => now });
    const agent = countedAgent(10);
    const { model } = replica(agent, continuations);
    const logs = ['r1', 'r2', 'r3'].map((id) => new CodeRunLog(agentRequest(id, 'counted')));
    for (const log of logs) await log.drive(model, 3);
    expect(continuations.size).toBe(2);
    expect(startsOf(agent)).toBe(3);
    // r1 was the least recently used: evicted, so its next step replays; r3 is still kept.
    await logs[0]!.drive(model, 4);
    await logs[2]!.drive(model, 4);
    expect(startsOf(agent)).toBe(4);
    expect(continuations.size).toBe(2);

    now += 60_000;
    await logs[1]!.drive(model, 5);
    expect(continuations.size).toBe(1);
    expect(startsOf(agent)).toBe(5);
    for (const log of logs) completedSum(await log.drive(model), 10);
  });

  it('never resumes an execution of another version of the agent or on a log older than it has seen', async () => {
    const v1 = countedAgent(10);
    const v2 = { ...v1, version: '2' };
    const log = new CodeRunLog(agentRequest('versions', 'counted'));
    const uncached = replica(v1, createCodeContinuations({ max: 0 })).model;
    await log.drive(uncached, 5);
    await log.nextDecision(uncached);
    const atStepSix = log.state;
    await log.drive(uncached, 8);
    await log.nextDecision(uncached);
    const atStepNine = log.state;

    const continuations = createCodeContinuations();
    const first = await continuations.advance(v1, atStepNine, { fresh: FRESH });
    const older = await continuations.advance(v1, atStepSix, { fresh: FRESH });
    expect(continuations.stats).toEqual({ warm: 0, cold: 2 });
    expect(callsOf(older)).toEqual([{ tool: 'echo', args: { i: 6, tag: 500_000_000 } }]);
    await continuations.advance(v1, atStepNine, { fresh: FRESH });
    const other = await continuations.advance(v2, atStepNine, { fresh: FRESH });
    expect(continuations.stats).toEqual({ warm: 0, cold: 4 });
    expect(callsOf(other)).toEqual(callsOf(first));
  });

  it('resumes a step that asked the model, and replays cold once another decision was recorded meanwhile', async () => {
    const asker = countedAsker();
    const answer = (request: ResolvedModelRequest) =>
      Promise.resolve({
        content: `answer to ${JSON.stringify(request)}`,
        usage: { inputTokens: 1, outputTokens: 1 },
        model: { id: 'fake-1', promptVersion: 'p1' },
        finishReason: 'stop',
      });
    const continuations = createCodeContinuations();
    const model = withCodeAgents({ agents: [asker], base: createScriptedModel(), continuations, answer });
    const state = await new CodeRunLog(agentRequest('asks', 'asker')).drive(model);
    expect(state.status).toBe('completed');
    expect(state.output).toEqual({ answers: 3 });
    // Four decisions and three answers, each advancing the kept execution; one cold start.
    expect(continuations.stats).toEqual({ warm: 6, cold: 1 });
    expect(startsOf(asker)).toBe(1);

    // Replica A stops at the model call of step 1; replica B decides and records that step meanwhile.
    const log = new CodeRunLog(agentRequest('asks-raced', 'asker'));
    const other = withCodeAgents({ agents: [asker], base: createScriptedModel(), answer });
    await log.nextDecision(other);
    const kept = createCodeContinuations();
    const start = await kept.advance(asker, log.state, { fresh: FRESH });
    if (start.kind !== 'model' || !start.request)
      throw new Error(`expected a ctx.model step, got ${start.kind}`);
    (await log.nextDecision(other)).forEach((draft) => log.add(draft));
    await log.nextDecision(other); // B's step 1 is recorded and its call answered: step 2 is due
    const frontier = withModelAnswer(start, await answer(start.request));
    const next = await kept.advance(asker, log.state, { fresh: FRESH, frontier });
    expect(kept.stats).toEqual({ warm: 0, cold: 2 });
    // The cold replay answered step 1 from B's record and stops at step 2's model call.
    expect(next).toMatchObject({
      kind: 'model',
      request: { messages: [{ role: 'user', content: 'question 2' }] },
    });
  });
});

describe('suspended continuations on the budget path', () => {
  it('resumes the step that stopped for its reservation or a budget wait, and asks each call once', async () => {
    // Each call's worst case is 1024 tokens (the default maxTokens) plus its prompt: step 3's call passes 3000.
    const agent = countedAsker({ budget: { maxTokens: 3000 }, onBudgetExceeded: 'wait' });
    const calls: string[] = [];
    const answer = (request: ResolvedModelRequest) => {
      calls.push(request.messages.at(-1)?.content ?? '');
      return Promise.resolve({
        content: 'ok',
        usage: { inputTokens: 500, outputTokens: 500 },
        model: { id: 'fake-1', promptVersion: 'p1' },
        finishReason: 'stop',
      });
    };
    const continuations = createCodeContinuations();
    const model = withCodeAgents({ agents: [agent], base: createScriptedModel(), continuations, answer });
    const log = new CodeRunLog(agentRequest('budgeted', 'asker'));
    let state = await log.drive(model);
    expect(state.waiting?.kind).toBe('budget');
    log.add({
      type: 'signal_received',
      data: { signalId: 'raise-1', name: 'raise_budget', payload: { maxTokens: 10_000 } },
    });
    state = await log.drive(model);
    expect(state.status).toBe('completed');
    const types = log.events.map((e) => e.type);
    expect(types.filter((t) => t === 'budget_reserved')).toHaveLength(3);
    expect(types.filter((t) => t === 'budget_exceeded')).toHaveLength(1);
    // Each step returned its model call, stopped for the reservation (or the wait), and went on warm from
    // the same parked call: one execution for the whole run, and each call asked once.
    expect(calls).toEqual(['question 1', 'question 2', 'question 3']);
    expect(continuations.stats.cold).toBe(1);
    expect(startsOf(agent)).toBe(1);
    // The values a step drew before its reservation are the ones its thought records.
    const thoughts = log.events.flatMap((e) => (e.type === 'thought' ? [e.data] : []));
    expect(thoughts.slice(0, 3).map((t) => decodeJournal(t.content).map((entry) => entry.k))).toEqual([
      ['now', 'model'],
      ['now', 'model'],
      ['now', 'model'],
    ]);
  });
});

function callsOf(step: CodeStep): { tool: string; args: unknown }[] {
  if (step.kind !== 'decide' || step.thought.decision.kind !== 'tool_calls')
    throw new Error(`expected tool calls, got ${step.kind}`);
  return step.thought.decision.calls.map(({ tool, args }) => ({ tool, args }));
}
