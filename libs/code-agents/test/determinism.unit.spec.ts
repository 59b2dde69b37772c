import { describe, expect, it } from 'vitest';
import type { JsonObject } from '@dura/contracts';
import { defineAgent, NonDeterminism, NotDrivenByCtx, ToolFailure } from '../src/index';
import { decideNext, withModelAnswer } from '../src/engine';
import { answer, countingFresh, SimRun, TEST_MODEL } from '../src/testing';

const refusingFresh = {
  now: () => {
    throw new Error('a recorded step must not read the clock');
  },
  random: () => {
    throw new Error('a recorded step must not draw a random number');
  },
  uuid: () => {
    throw new Error('a recorded step must not make an id');
  },
};

describe('recorded now, random and uuid', () => {
  const stamper = defineAgent({
    name: 'stamper',
    version: '1',
    tools: ['ledger.write'],
    async run(ctx) {
      const at = ctx.now().toISOString();
      const id = ctx.uuid();
      const roll = ctx.random();
      await ctx.tool('ledger.write', { at, id, roll });
      await ctx.sleep(1);
      return { at, id, roll, later: ctx.now().toISOString() };
    },
  });

  it('given a run that drew values, when replayed from its log, then the same values come back without new draws', async () => {
    const run = new SimRun(stamper, { tools: { 'ledger.write': (args) => args }, fresh: countingFresh() });
    const end = await run.drive();
    expect(end.state.status).toBe('completed');
    const written = end.state.calls[0]?.args;

    // Replay up to the second step: the first step's values come from its thought, never from `fresh`.
    const upToSleep = run.events.filter(
      (e) => e.seq < run.events.findIndex((x) => x.type === 'timer_fired') + 1,
    );
    const step = await decideNext(stamper, upToSleep, { fresh: refusingFresh });

    expect(step.kind).toBe('suspended');
    expect(end.state.output).toMatchObject(written ?? {});
    expect(written).toEqual({
      at: '2026-01-01T00:00:01.000Z',
      id: expect.stringMatching(/^00000000-/) as unknown,
      roll: 3 / 97,
    });
  });

  it('given a completed log, when it is replayed with other generators, then the same thought is decided', async () => {
    const run = new SimRun(stamper, { tools: { 'ledger.write': (args) => args } });
    await run.drive();
    const last = run.events.findLastIndex((e) => e.type === 'thought');
    const before = run.events.slice(0, last);
    const recorded = run.events[last];

    const again = await decideNext(stamper, before, { fresh: countingFresh() });

    expect(again).toEqual({ kind: 'decide', thought: recorded?.data });
  });
});

describe('non-determinism', () => {
  const v1 = defineAgent({
    name: 'payer',
    version: '1',
    tools: ['billing.charge', 'billing.refund'],
    async run(ctx) {
      await ctx.tool('billing.charge', { cents: 100 });
      await ctx.tool('billing.charge', { cents: 200 });
      return 'paid';
    },
  });
  const v2 = defineAgent({
    ...v1,
    async run(ctx) {
      await ctx.tool('billing.charge', { cents: 100 });
      await ctx.tool('billing.refund', { cents: 100 });
      return 'paid';
    },
  });

  it('given a log of v1, when code asking another tool at a recorded position replays it, then both calls are named and nothing is decided', async () => {
    const run = new SimRun(v1, { tools: { 'billing.charge': () => ({ ok: true }) } });
    await run.drive();
    const log = run.events.slice(
      0,
      run.events.findIndex((e) => e.type === 'run_completed'),
    );
    const upToSecondStep = log.slice(
      0,
      log.findLastIndex((e) => e.type === 'thought'),
    );

    const step = await decideNext(v2, upToSecondStep, { fresh: countingFresh() });
    const resumed = await decideNext(v2, run.events.slice(0, -2), { fresh: countingFresh() });

    expect(step.kind).toBe('blocked');
    expect(resumed.kind).toBe('blocked');
    if (resumed.kind !== 'blocked') throw new Error('expected a block');
    expect(resumed.error).toBeInstanceOf(NonDeterminism);
    expect(resumed.error.message).toContain('step 2 of payer@1');
    expect(resumed.error.message).toContain('the log recorded ctx call billing.charge {"cents":200}');
    expect(resumed.error.message).toContain('the code now asks for ctx call billing.refund {"cents":100}');
  });

  it('given a drive with the changed code after a kill, when it meets the recorded call, then the run waits and no tool runs', async () => {
    const tools = { 'billing.charge': () => ({ ok: true }), 'billing.refund': () => ({ ok: true }) };
    const run = new SimRun(v1, { tools });
    await run.drive();
    const crashed = new SimRun(v2, { tools });
    for (const event of run.events.slice(
      1,
      run.events.findIndex((e) => e.type === 'tool_call_requested' && e.data.step === 2) + 1,
    ))
      crashed.append(event.type, event.data);
    crashed.toolCalls.length = 0;

    const end = await crashed.drive();

    expect(end.kind).toBe('blocked');
    expect(crashed.toolCalls).toEqual(['billing.charge']); // the recorded intent, redispatched; no refund
  });

  it('given a model request changed by the new code, when replayed, then the recorded request is named', async () => {
    const asker = defineAgent({
      name: 'asker',
      version: '1',
      model: TEST_MODEL,
      tools: ['t'],
      async run(ctx) {
        const a = await ctx.model({ prompt: 'one' });
        return ctx.tool('t', { a: a.content });
      },
    });
    const changed = defineAgent({
      ...asker,
      async run(ctx) {
        const a = await ctx.model({ prompt: 'two' });
        return ctx.tool('t', { a: a.content });
      },
    });
    const run = new SimRun(asker, { tools: { t: () => 1 }, model: () => 'yes' });
    await run.drive();

    const step = await decideNext(changed, run.events.slice(0, -2), { fresh: countingFresh() });

    expect(step.kind).toBe('blocked');
    if (step.kind !== 'blocked') throw new Error('expected a block');
    expect(step.error.message).toMatch(
      /recorded ctx\.model \(request [0-9a-f]{12}\), the code now asks for ctx\.model \(request [0-9a-f]{12}\)/,
    );
  });
});

describe('ctx.mark under replay', () => {
  const marker = (name: string) =>
    defineAgent({
      name: 'marker',
      version: '1',
      tools: ['desk.route'],
      async run(ctx) {
        ctx.mark(name);
        const routed = await ctx.tool('desk.route', { to: 'billing' });
        await ctx.tool('desk.route', { to: 'done' });
        return routed;
      },
    });
  const tools = { 'desk.route': (args: JsonObject) => args };
  /** A completed run's log up to its last thought (its first step recorded the mark), and that thought. */
  async function markedLog() {
    const run = new SimRun(marker('handoff: triage → billing'), { tools });
    const end = await run.drive();
    expect(end.state.status).toBe('completed');
    const last = run.events.findLastIndex((e) => e.type === 'thought');
    return { log: run.events.slice(0, last), recorded: run.events[last] };
  }

  it('given a recorded mark, when the same code replays it, then the mark replays and the recorded thought is decided', async () => {
    const { log, recorded } = await markedLog();

    const step = await decideNext(marker('handoff: triage → billing'), log, { fresh: refusingFresh });

    expect(step).toEqual({ kind: 'decide', thought: recorded?.data });
  });

  it('given a recorded mark, when the code now marks another name there, then the run stops naming both', async () => {
    const { log } = await markedLog();

    const step = await decideNext(marker('handoff: triage → refunds'), log, { fresh: refusingFresh });

    expect(step.kind).toBe('blocked');
    if (step.kind !== 'blocked') throw new Error('expected a block');
    expect(step.error).toBeInstanceOf(NonDeterminism);
    expect(step.error.message).toContain('the log recorded ctx.mark("handoff: triage → billing")');
    expect(step.error.message).toContain('the code now asks for ctx.mark("handoff: triage → refunds")');
  });
});

describe('tool failure', () => {
  const careful = defineAgent({
    name: 'careful',
    version: '1',
    tools: ['flaky.op', 'fallback.op'],
    async run(ctx) {
      try {
        return await ctx.tool('flaky.op', {});
      } catch (err) {
        if (!(err instanceof ToolFailure)) throw err;
        return { fellBack: await ctx.tool('fallback.op', { because: err.code }) };
      }
    },
  });

  it('given a tool that fails for good, when the code catches the typed failure, then it takes its fallback', async () => {
    const run = new SimRun(careful, {
      tools: {
        'flaky.op': () => {
          throw new ToolFailure('flaky.op', 'x', { code: 'upstream_down', message: 'down' });
        },
        'fallback.op': (args) => args,
      },
    });
    const end = await run.drive();

    expect(end.state.output).toEqual({ fellBack: { because: 'upstream_down' } });
  });

  it('given an uncaught failure, when driven, then the run fails with the tool error code', async () => {
    const bare = defineAgent({ ...careful, run: (ctx) => ctx.tool('flaky.op', {}) });
    const run = new SimRun(bare, { tools: {} });
    const end = await run.drive();

    expect(end.state.status).toBe('failed');
    expect(end.state.error?.code).toBe('unknown_tool');
  });

  it('given a tool the agent did not declare, when called, then the run fails saying how to fix it', async () => {
    const sneaky = defineAgent({ ...careful, run: (ctx) => ctx.tool('shell.exec', { cmd: 'ls' }) });
    const run = new SimRun(sneaky, { tools: {} });
    const end = await run.drive();

    expect(end.state.error?.code).toBe('agent_misuse');
    expect(end.state.error?.message).toContain("declare it in the agent's tools");
  });
});

describe('not driven by ctx', () => {
  it('given a run awaiting a real timer, when decided, then a clear error says so instead of hanging', async () => {
    const sleepy = defineAgent({
      name: 'sleepy',
      version: '1',
      tools: ['t'],
      async run(ctx) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return ctx.tool('t', {});
      },
    });
    const run = new SimRun(sleepy, { tools: { t: () => 1 } });
    const end = await run.drive();

    expect(end.kind).toBe('blocked');
    if (end.kind !== 'blocked') throw new Error('expected a block');
    expect(end.error).toBeInstanceOf(NotDrivenByCtx);
    expect(end.error.message).toContain('not a ctx call');
    expect(run.toolCalls).toEqual([]);
  });

  it('given a run awaiting plain promises and deep async chains, when decided, then it is driven normally', async () => {
    const deep = async (n: number): Promise<number> => (n === 0 ? 0 : 1 + (await deep(n - 1)));
    const chained = defineAgent({
      name: 'chained',
      version: '1',
      tools: ['t'],
      async run(ctx) {
        const depth = await deep(500);
        return ctx.tool('t', { depth });
      },
    });
    const run = new SimRun(chained, { tools: { t: (args) => args } });
    const end = await run.drive();

    expect(end.state.output).toEqual({ depth: 500 });
  });
});

describe('the unrecorded frontier', () => {
  const asker = defineAgent({
    name: 'asker',
    version: '1',
    model: TEST_MODEL,
    tools: ['t'],
    async run(ctx) {
      const at = ctx.now().getTime();
      const a = await ctx.model({ prompt: 'one' });
      return ctx.tool('t', { a: a.content, at });
    },
  });

  it('given a model step, when decided again with the answer, then the values drawn before it are kept', async () => {
    const run = new SimRun(asker, { tools: { t: () => 1 } });
    const first = await decideNext(asker, run.events, { fresh: countingFresh() });
    if (first.kind !== 'model') throw new Error('expected a model step');

    const other = { ...countingFresh(), now: () => 42 };
    const frontier = withModelAnswer(first, answer('yes'));
    const next = await decideNext(asker, run.events, { fresh: other, frontier });

    expect(first.frontier).toMatchObject({ step: 0, entries: [{ k: 'now' }] });
    expect(next).toMatchObject({
      kind: 'decide',
      thought: { decision: { calls: [{ tool: 't', args: { a: 'yes', at: Date.UTC(2026, 0, 1) + 1000 } }] } },
    });
  });

  it('given a frontier of another step (the log moved on), when advancing, then it is ignored', async () => {
    const run = new SimRun(asker, { tools: { t: () => 1 } });
    const first = await decideNext(asker, run.events, { fresh: countingFresh() });
    if (first.kind !== 'model') throw new Error('expected a model step');

    const stale = { step: 3, entries: withModelAnswer(first, answer('old')).entries };
    const again = await decideNext(asker, run.events, { fresh: countingFresh(), frontier: stale });

    expect(again.kind).toBe('model');
  });
});
