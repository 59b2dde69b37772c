import { describe, expect, it } from 'vitest';
import { defineAgent, ToolFailure } from '../src/index';
import { SimRun, types } from '../src/testing';

const publish = () => ({ published: true });

describe('approval', () => {
  const publisher = defineAgent({
    name: 'publisher',
    version: '1',
    tools: ['site.publish'],
    async run(ctx) {
      const verdict = await ctx.approve('publish', { timeout: 3600 });
      if (!verdict.approved) return { published: false, reason: verdict.reason ?? null };
      return ctx.tool('site.publish', { page: 'home' });
    },
  });

  it('given a run waiting for a verdict, when a person approves, then it goes on and publishes', async () => {
    const run = new SimRun(publisher, { tools: { 'site.publish': publish } });
    const waiting = await run.drive();
    expect(waiting.kind).toBe('waiting');
    expect(waiting.state.waiting).toMatchObject({ kind: 'signal', signal: 'publish' });
    expect(run.toolCalls).toEqual([]);

    run.signal('publish', { approved: true });
    const end = await run.drive();

    expect(end.state.output).toEqual({ published: true });
    expect(run.toolCalls).toEqual(['site.publish']);
  });

  it('given a run waiting for a verdict, when a person refuses, then nothing is published', async () => {
    const run = new SimRun(publisher, { tools: { 'site.publish': publish } });
    await run.drive();
    run.signal('publish', { approved: false, reason: 'typo in the title' });
    const end = await run.drive();

    expect(end.state.output).toEqual({ published: false, reason: 'typo in the title' });
    expect(run.toolCalls).toEqual([]);
  });

  it.each([
    ['{}', {}, '{}'],
    ['null', null, 'null'],
    ['"yes"', 'yes', '"yes"'],
    ['{"approved":"true"}', { approved: 'true' }, '{"approved":"true"}'],
  ] as const)(
    'given the answer %s, then it is a refusal naming what arrived, and nothing is published',
    async (_, payload, shown) => {
      const run = new SimRun(publisher, { tools: { 'site.publish': publish } });
      await run.drive();
      run.signal('publish', payload);
      const end = await run.drive();

      expect(end.state.output).toEqual({
        published: false,
        reason: `approval signal 'publish' carried ${shown} — only {"approved": true} approves`,
      });
      expect(run.toolCalls).toEqual([]);
    },
  );

  it('given a run waiting for a verdict, then its wait is marked as one (dura approve answers it)', async () => {
    const run = new SimRun(publisher, { tools: { 'site.publish': publish } });
    const waiting = await run.drive();
    expect(waiting.state.calls[0]?.args).toEqual({ name: 'publish', timeoutSeconds: 3600, approval: true });
    expect(waiting.state.waits).toMatchObject([{ kind: 'signal', signal: 'publish', approval: true }]);
  });

  it('given a verdict wait recorded before waits were marked, then the code goes on from it (no stop)', async () => {
    const unmarked = defineAgent({
      name: 'publisher',
      version: '1',
      tools: ['site.publish'],
      async run(ctx) {
        await ctx.waitForSignal('publish', { timeout: 3600 });
        return null;
      },
    });
    const run = new SimRun(unmarked, { tools: { 'site.publish': publish } });
    await run.drive();
    expect(run.state.calls[0]?.args).toEqual({ name: 'publish', timeoutSeconds: 3600 });
    run.signal('publish', { approved: true });
    const end = await run.drive(publisher);

    expect(end.kind).toBe('finished');
    expect(end.state.output).toEqual({ published: true });
  });

  it('given nobody answers, when the timeout fires, then it counts as a refusal', async () => {
    const run = new SimRun(publisher, { tools: { 'site.publish': publish }, timeOutSignals: true });
    const end = await run.drive();

    expect(end.state.output).toEqual({ published: false, reason: 'nobody answered in time' });
  });

  const gated = defineAgent({
    name: 'gated',
    version: '1',
    tools: ['site.publish'],
    async run(ctx) {
      try {
        return await ctx.tool('site.publish', {}, { approval: { onTimeout: 'reject' } });
      } catch (err) {
        if (err instanceof ToolFailure && err.code === 'rejected') return 'not approved';
        throw err;
      }
    },
  });

  it('given a tool call under an approval policy, when rejected, then the code sees a typed rejection', async () => {
    const run = new SimRun(gated, { tools: { 'site.publish': publish } });
    const waiting = await run.drive();
    expect(waiting.state.waiting).toMatchObject({ kind: 'approval', callId: 'call-1' });

    run.signal('reject', { reason: 'no' });
    const end = await run.drive();

    expect(end.state.output).toBe('not approved');
    expect(run.toolCalls).toEqual([]);
  });

  it('given a tool call under an approval policy, when approved, then the gateway runs it', async () => {
    const run = new SimRun(gated, { tools: { 'site.publish': publish } });
    await run.drive();
    run.signal('approve', { approved: true });
    const end = await run.drive();

    expect(end.state.output).toEqual({ published: true });
  });
});

describe('sleep', () => {
  const sleeper = defineAgent({
    name: 'sleeper',
    version: '1',
    tools: [],
    async run(ctx) {
      await ctx.sleep(600);
      await ctx.sleep({ until: '2030-01-01T00:00:00Z' });
      return 'rested';
    },
  });

  it('given two sleeps, when their timers fire, then each was a durable timer wait', async () => {
    const run = new SimRun(sleeper, {});
    const end = await run.drive();

    expect(end.state.output).toBe('rested');
    const waits = run.events.flatMap((e) => (e.type === 'wait_requested' ? [e.data] : []));
    expect(waits).toMatchObject([
      { kind: 'timer', callId: 'call-1' },
      { kind: 'timer', callId: 'call-2', until: '2030-01-01T00:00:00.000Z' },
    ]);
    expect(types(run.events).filter((t) => t === 'timer_fired')).toHaveLength(2);
  });
});

describe('signal wait with a timeout', () => {
  const listener = defineAgent({
    name: 'listener',
    version: '1',
    tools: [],
    async run(ctx) {
      const reply = await ctx.waitForSignal('reply', { timeout: 60 });
      return reply.kind === 'signal' ? { got: reply.payload } : { got: 'nothing' };
    },
  });

  it('given a signal arrives, when the run resumes, then the code gets its payload', async () => {
    const run = new SimRun(listener, {});
    const waiting = await run.drive();
    expect(waiting.state.waiting).toMatchObject({ kind: 'signal', signal: 'reply', onTimeout: 'continue' });

    run.signal('reply', { text: 'yes' });
    const end = await run.drive();

    expect(end.state.output).toEqual({ got: { text: 'yes' } });
  });

  it('given no signal, when the timeout fires, then the code sees a timeout, not an error', async () => {
    const run = new SimRun(listener, { timeOutSignals: true });
    const end = await run.drive();

    expect(end.state.output).toEqual({ got: 'nothing' });
  });
});

describe('child invoke', () => {
  const summarizer = defineAgent({
    name: 'summarizer',
    version: '2',
    tools: ['text.shorten'],
    async run(ctx, input) {
      return ctx.tool('text.shorten', { text: input });
    },
  });
  const orchestrator = defineAgent({
    name: 'orchestrator',
    version: '1',
    tools: [],
    async run(ctx) {
      const parts = [await ctx.invoke(summarizer, 'one two'), await ctx.invoke(summarizer, 'three four')];
      try {
        await ctx.invoke({ name: 'broken' }, null);
      } catch (err) {
        return { parts, broken: err instanceof ToolFailure ? err.code : 'untyped' };
      }
      return { parts };
    },
  });
  const broken = defineAgent({
    name: 'broken',
    version: '1',
    tools: [],
    run: () => Promise.reject(new Error('no luck')),
  });

  it('given two children and one that fails, when driven, then outputs and a typed failure come back', async () => {
    const world = {
      tools: { 'text.shorten': (args: { text?: unknown }) => String(args.text).split(' ')[0] ?? '' },
      agents: { summarizer, broken },
    };
    const run = new SimRun(orchestrator, world, 'run-orch');
    const end = await run.drive();

    expect(end.state.output).toEqual({ parts: ['one', 'three'], broken: 'child_run_failed' });
    const children = run.events.flatMap((e) => (e.type === 'child_run_requested' ? [e.data] : []));
    expect(children.map((c) => c.childRunId)).toEqual(['run-orch-c1', 'run-orch-c2', 'run-orch-c3']);
    expect(children[0]?.request.agent).toEqual({ kind: 'agent', name: 'summarizer', version: '2' });
  });
});
