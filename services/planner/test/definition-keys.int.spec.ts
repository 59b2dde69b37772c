// Concurrency keys an agent's definition declares over the run's input, on a real NATS with two planners:
// filled once at the start and recorded in `run_started`, enforced for JSON and code agents alike, a request's
// own key wins, and a request whose input lacks the key's path is refused naming it. Runs waiting for a key go
// by priority.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDuraClient, type DuraClient } from '@dura/client';
import type { RunEvent, ScriptedStep } from '@dura/contracts';
import { defineAgent } from '@dura/code-agents';
import { fold, type RunState } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { builtinRegistry } from '@dura/tools';
import {
  AgentRegistry,
  createAgentModel,
  createModelRouter,
  createScriptedModel,
  KEY_UNRESOLVED_CODE,
  replayRun,
  withCodeAgents,
} from '@dura/agents';
import { createPlanner, type Planner } from '../src/index';
import { STREAM_OPTIONS, connect, eventually, prepare, testLogger, type Connections } from './support';
import { startTimerFirer, type TimerFirer } from './timer-firer';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
let setup: Connections;
let client: DuraClient;
let served: ReturnType<typeof withCodeAgents>;
let timers: TimerFirer | undefined;
const replicas: { conn: Connections; planner: Planner }[] = [];

const WAIT_FOR_GO: ScriptedStep[] = [{ tool: 'dura.wait_for_signal', args: { name: 'go' } }];

const tools = builtinRegistry();
const agents = new AgentRegistry({
  agents: [
    {
      name: 'refunds',
      version: '1',
      model: { provider: 'scripted', steps: WAIT_FOR_GO },
      concurrency: { key: 'customer:{{input.customerId}}', limit: 1 },
    },
    {
      name: 'exports',
      version: '1',
      model: { provider: 'scripted', steps: WAIT_FOR_GO },
      concurrency: { key: 'exports', limit: 1 },
    },
  ],
});
const reviewer = defineAgent({
  name: 'reviewer',
  version: '1',
  tools: [],
  concurrency: { key: 'doc:{{input.doc.id}}', limit: 1 },
  async run(ctx) {
    await ctx.waitForSignal('go');
    return 'reviewed';
  },
});

beforeAll(async () => {
  setup = await prepare(infra().nats.url);
  client = createDuraClient(setup);
  // Runs wait for keys on durable timers, which a wake has fire at once.
  timers = await startTimerFirer(setup);
  for (let i = 0; i < 2; i++) {
    const conn = await connect(infra().nats.url, `planner-${i}`);
    const base = createModelRouter({
      scripted: createScriptedModel(),
      agents: createAgentModel({ agents, tools }),
    });
    served = withCodeAgents({ agents: [reviewer], base });
    const planner = createPlanner({
      ...conn,
      model: served,
      tools,
      log: testLogger(`planner-${i}`),
      streams: STREAM_OPTIONS,
    });
    await planner.start();
    replicas.push({ conn, planner });
  }
});

afterAll(async () => {
  await timers?.stop();
  for (const { conn, planner } of replicas) {
    await planner.stop();
    await conn.close();
  }
  await setup?.close();
});

async function logOf(runId: string): Promise<RunEvent[]> {
  return setup.store.read(runId);
}

/** Waits until the run's folded state satisfies `ok`, and returns it. */
function until(runId: string, what: string, ok: (state: RunState) => boolean): Promise<RunState> {
  return eventually(async () => {
    const events = await logOf(runId);
    if (events.length === 0) return undefined;
    const state = fold(events);
    return ok(state) ? state : undefined;
  }, `${runId} ${what}`);
}

const forSignal = (state: RunState) => state.waits.some((wait) => wait.kind === 'signal');
const forKey = (key: string) => (state: RunState) =>
  state.waiting?.reason === `capacity of concurrency key ${key} (limit 1)`;

async function finish(runId: string): Promise<void> {
  await client.signal(runId, 'go', { payload: { ok: true } });
  await until(runId, 'to complete', (state) => state.status === 'completed');
}

describe('concurrency keys from an agent definition', () => {
  it('given key customer:{{input.customerId}} of limit 1, two runs of one customer go one after the other, a run of another customer alongside', async () => {
    await client.submitRun({
      runId: 'c1-first',
      agent: { kind: 'agent', name: 'refunds' },
      input: { customerId: 1 },
    });
    const first = await until('c1-first', 'to wait for its signal', forSignal);
    const started = (await logOf('c1-first')).find((event) => event.type === 'run_started');
    expect(started?.data).toMatchObject({ concurrency: { key: 'customer:1', limit: 1 } });
    expect(first.concurrency).toEqual({ key: 'customer:1', limit: 1 });

    await client.submitRun({
      runId: 'c1-second',
      agent: { kind: 'agent', name: 'refunds' },
      input: { customerId: 1 },
    });
    await client.submitRun({
      runId: 'c2-only',
      agent: { kind: 'agent', name: 'refunds' },
      input: { customerId: '2' },
    });
    await until('c2-only', 'to run beside customer 1', forSignal);
    await until('c1-second', 'to wait for the key', forKey('customer:1'));
    // Held while the first waits for its signal: the second has not taken a step.
    expect((await logOf('c1-second')).some((event) => event.type === 'tool_call_requested')).toBe(false);

    await finish('c1-first');
    // The key left wakes the second at once (its timer is only the fallback).
    await until('c1-second', 'to take the key once the first ended', forSignal);
    await finish('c1-second');
    await finish('c2-only');
    // Replay re-derives the wait for the key from the log, and the key from run_started, without a divergence.
    expect(await replayRun({ events: await logOf('c1-second'), model: served })).toMatchObject({ ok: true });
  });

  it('given a request naming its own key, the request’s wins over the definition’s', async () => {
    await client.submitRun({
      runId: 'own-holder',
      agent: { kind: 'agent', name: 'refunds' },
      input: { customerId: 7 },
    });
    await until('own-holder', 'to wait for its signal', forSignal);
    await client.submitRun({
      runId: 'own-key',
      agent: { kind: 'agent', name: 'refunds' },
      input: { customerId: 7 },
      concurrency: { key: 'batch:9', limit: 1 },
    });
    const state = await until('own-key', 'to run under its own key', forSignal);
    const started = (await logOf('own-key')).find((event) => event.type === 'run_started');
    expect(started?.data).not.toHaveProperty('concurrency');
    expect(state.request?.concurrency).toEqual({ key: 'batch:9', limit: 1 });
    await finish('own-key');
    await finish('own-holder');
  });

  it('given an input without the key’s path, the request is refused, naming the path', async () => {
    await client.submitRun({
      runId: 'no-customer',
      agent: { kind: 'agent', name: 'refunds' },
      input: { orderId: 3 },
    });
    const state = await until('no-customer', 'to be rejected', (s) => s.status === 'rejected');
    expect(state.error?.code).toBe(KEY_UNRESOLVED_CODE);
    expect(state.error?.message).toContain('input.customerId');
    expect(state.error?.message).toContain('is missing');
    await client.submitRun({
      runId: 'list-customer',
      agent: { kind: 'agent', name: 'refunds' },
      input: { customerId: [1] },
    });
    const list = await until('list-customer', 'to be rejected', (s) => s.status === 'rejected');
    expect(list.error?.message).toContain("input.customerId in this run's input is a list");
  });

  it('given a code agent keyed by doc:{{input.doc.id}}, its runs of one document go one at a time too', async () => {
    await client.submitRun({
      runId: 'doc-a',
      agent: { kind: 'agent', name: 'reviewer' },
      input: { doc: { id: 'x' } },
    });
    await until('doc-a', 'to wait for its signal', forSignal);
    await client.submitRun({
      runId: 'doc-b',
      agent: { kind: 'agent', name: 'reviewer' },
      input: { doc: { id: 'x' } },
    });
    await until('doc-b', 'to wait for the key', forKey('doc:x'));
    await finish('doc-a');
    await until('doc-b', 'to take the key', forSignal);
    await finish('doc-b');
    const log = await logOf('doc-b');
    expect(log.some((event) => event.type === 'wait_requested' && event.data.reason?.includes('doc:x'))).toBe(
      true,
    );
    expect(await replayRun({ events: log, model: served })).toMatchObject({ ok: true });
  });

  it('given runs waiting for a key, a run of higher priority asking last takes it first when it is left', async () => {
    await client.submitRun({ runId: 'ex-holder', agent: { kind: 'agent', name: 'exports' } });
    await until('ex-holder', 'to wait for its signal', forSignal);
    for (const runId of ['ex-low-1', 'ex-low-2']) {
      await client.submitRun({ runId, agent: { kind: 'agent', name: 'exports' }, tenant: 'bulk' });
      await until(runId, 'to wait for the key', forKey('exports'));
    }
    await client.submitRun({ runId: 'ex-urgent', agent: { kind: 'agent', name: 'exports' }, priority: 10 });
    await until('ex-urgent', 'to wait for the key', forKey('exports'));

    await finish('ex-holder');
    await until('ex-urgent', 'to take the key first', forSignal);
    // The others still wait: the key is the urgent run's until it ends.
    expect(forKey('exports')(fold(await logOf('ex-low-1')))).toBe(true);
    await finish('ex-urgent');
    await until('ex-low-1', 'to take the key next', forSignal);
    await finish('ex-low-1');
    await until('ex-low-2', 'to take the key last', forSignal);
    await finish('ex-low-2');
  });
});
