// A code agent's model call is watched as a JSON agent's is: when another replica records the run's next decision
// while the call is still in flight (both took the run: an ack lost to a pause, a worker driving on in place
// beside a planner given the decide task), the call is aborted instead of being retried against a provider
// for an answer whose append would be refused.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DuraError } from '@dura/contracts';
import { fold } from '@dura/core';
import { retryUntil as eventually, useTestInfra } from '@dura/testing';
import { createScriptedModel, withCodeAgents } from '@dura/agents';
import { defineAgent, type ModelAnswer } from '@dura/code-agents';
import { createRunDriver, type DriveOutcome, type RunDriver } from '../src/index';
import { confirmCurrent } from '../src/superseded-watch';
import { appendRequest, connect, prepare, testLogger, type Connections } from './support';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const asker = defineAgent({
  name: 'asker',
  version: '1',
  model: { provider: 'openai', model: 'fake-1', maxTokens: 10 },
  tools: [],
  async run(ctx) {
    const verdict = await ctx.model({ prompt: 'verdict?' });
    return { verdict: verdict.content };
  },
});

const ANSWER: ModelAnswer = {
  content: 'yes',
  usage: { inputTokens: 3, outputTokens: 1 },
  model: { id: 'fake-1', promptVersion: '1' },
  finishReason: 'stop',
};

const infra = useTestInfra({ database: false });
const conns: Connections[] = [];
let setup: Connections;
/** What the hanging replica's provider saw: its calls, and whether the call it holds was aborted. */
const hanging = { calls: 0, aborted: false };
let slow: RunDriver;
let fast: RunDriver;

beforeAll(async () => {
  setup = await prepare(infra().nats.url);
  const driver = async (name: string, answer: Parameters<typeof withCodeAgents>[0]['answer']) => {
    const conn = await connect(infra().nats.url, name);
    conns.push(conn);
    const model = withCodeAgents({
      agents: [asker],
      base: createScriptedModel(),
      ...(answer ? { answer } : {}),
    });
    return createRunDriver({
      store: conn.store,
      js: conn.js,
      model,
      log: testLogger(name),
      clock: () => new Date(),
    });
  };
  // This replica's provider hangs (for 30 s) until its caller gives the call up.
  slow = await driver('planner-slow', (_request, { signal }) => {
    hanging.calls += 1;
    return new Promise<ModelAnswer>((resolve, reject) => {
      const timer = setTimeout(() => resolve(ANSWER), 30_000).unref();
      signal?.addEventListener('abort', () => {
        hanging.aborted = true;
        clearTimeout(timer);
        reject(signal.reason as Error);
      });
    });
  });
  fast = await driver('planner-fast', () => Promise.resolve(ANSWER));
});

afterAll(async () => {
  await Promise.allSettled(conns.map((conn) => conn.close()));
  await setup?.close();
});

describe("a code agent's model call", () => {
  it('is aborted once another replica records the decision it was asked for', async () => {
    const runId = 'code-superseded';
    await appendRequest(setup.store, { v: 1, runId, agent: { kind: 'agent', name: 'asker' } });
    const held = slow.drive(runId).then(
      (outcome: DriveOutcome) => ({ outcome }),
      (err: unknown) => ({ err }),
    );
    await eventually(() => expect(hanging.calls).toBe(1));

    const outcome = await fast.drive(runId);
    expect(outcome.state).toMatchObject({ status: 'completed', output: { verdict: 'yes' } });

    await eventually(() => expect(hanging.aborted).toBe(true), 10_000);
    const { err } = (await held) as { err?: unknown };
    expect(err).toBeInstanceOf(DuraError);
    expect(err).toMatchObject({ code: 'decision_superseded', retryable: true });
    expect(hanging.calls).toBe(1);
    const log = await setup.store.read(runId);
    expect(log.filter((event) => event.type === 'thought')).toHaveLength(1);
    expect(fold(log).status).toBe('completed');
  });

  it('is confirmed before it is asked only while the log holds no decision past the state it decides on', async () => {
    const runId = 'code-superseded';
    const log = await setup.store.read(runId);
    const thought = log.find((event) => event.type === 'thought');
    const last = log.at(-1);
    if (!thought || !last) throw new Error(`run ${runId} has no thought: the test above did not run`);
    // A replica folded up to just before the thought: another recorded the decision meanwhile.
    await expect(confirmCurrent(setup.store, runId, thought.seq - 1)()).rejects.toMatchObject({
      code: 'decision_superseded',
      retryable: true,
      message: `another replica recorded thought at #${thought.seq} of run ${runId} meanwhile`,
    });
    await expect(confirmCurrent(setup.store, runId, last.seq)()).resolves.toBeUndefined();
    // A replica that cannot read the log (cut off from NATS) cannot tell: it does not ask.
    const unreadable = { readTail: () => Promise.reject(new Error('TIMEOUT')) };
    await expect(confirmCurrent(unreadable, runId, last.seq)()).rejects.toMatchObject({
      code: 'log_unreadable',
      retryable: true,
    });
    // Nor one whose read came back late (held up in a partition): the log may have gone on meanwhile.
    const late = {
      readTail: () => new Promise<never[]>((resolve) => setTimeout(() => resolve([]), 300)),
    };
    await expect(confirmCurrent(late, runId, last.seq, 200)()).rejects.toMatchObject({
      code: 'log_unreadable',
      message: expect.stringMatching(/took \d+ ms, more than 200 ms/),
    });
    await expect(confirmCurrent(late, runId, last.seq, 2_000)()).resolves.toBeUndefined();
  });
});
