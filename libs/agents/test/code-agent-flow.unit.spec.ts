import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@dura/testing';
import { defineAgent, type AnyCodeAgent } from '@dura/code-agents';
import type { RunRequest, Usage } from '@dura/contracts';
import type { EventDraft, RunState } from '@dura/core';
import {
  CAPACITY_WAIT_PREFIX,
  createScriptedModel,
  replayModelFor,
  replayRun,
  withCodeAgents,
  type AdmitInput,
  type CallAdmission,
  type ChatProvider,
  type ChatRequest,
} from '../src/index';
import { simulateRun } from '../src/testing';
import { twiceAgent } from './code-agent-support';

// A code agent's ctx.model calls under flow control, through the planner's own step: each call past the log
// is admitted on its worst case before it is made, a call not admitted becomes a recorded wait for capacity
// (nothing asked), and what an admitted call used is settled once it answered.

const REASON = 'capacity of openai/fake-1 (requests per minute)';

function fakeProvider(fail?: (request: ChatRequest) => boolean) {
  const asked: ChatRequest[] = [];
  const provider: ChatProvider = {
    provider: 'openai',
    chat(request) {
      asked.push(request);
      if (fail?.(request)) return Promise.reject(new Error('the provider went away'));
      return Promise.resolve({
        content: `answer ${asked.length}`,
        toolCalls: [],
        usage: { inputTokens: 20, outputTokens: 5 },
        finishReason: 'stop',
        modelId: 'fake-1-2026',
      });
    },
  };
  return { provider, asked };
}

function served(agents: AnyCodeAgent[], provider: ChatProvider) {
  return withCodeAgents({ agents, base: createScriptedModel(), providerFor: () => provider });
}

const request = (runId: string, name: string): RunRequest & { runId: string } => ({
  v: 1,
  runId,
  agent: { kind: 'agent', name },
});

const twice = twiceAgent({ model: 'fake-2', maxTokens: 7 });

/** Flow control that refuses the first `refusals` asks, then lets calls go; it keeps what it was asked and told. */
function gate(refusals: number) {
  const asks: AdmitInput[] = [];
  const settled: (Usage | undefined)[] = [];
  const admit = (input: AdmitInput): Promise<CallAdmission> => {
    asks.push(input);
    if (asks.length <= refusals)
      return Promise.resolve({ kind: 'wait', until: new Date(Date.now() + 1_000), reason: REASON });
    return Promise.resolve({
      kind: 'go',
      settle: (used) => {
        settled.push(used);
        return Promise.resolve();
      },
    });
  };
  return { admit, asks, settled };
}

/** Fires a run's open wait for capacity, as its timer would. */
function fireCapacityWaits(state: RunState): EventDraft[] {
  const wait = state.waiting;
  if (state.status !== 'waiting' || !wait?.waitId.startsWith(CAPACITY_WAIT_PREFIX)) return [];
  return [{ type: 'timer_fired', data: { waitId: wait.waitId } }];
}

describe("a code agent's ctx.model under model limits", () => {
  it('given no capacity for its first call, when decided, then the run records a timer wait naming the limit and asks nothing; woken, it asks and settles what the call used', async () => {
    const { provider, asked } = fakeProvider();
    const flow = gate(1);
    const askedWhileWaiting: number[] = [];
    const run = await simulateRun(request('f-1', 'twice'), served([twice], provider), {
      admit: flow.admit,
      before: (state) => {
        if (state.status === 'waiting') askedWhileWaiting.push(asked.length);
        return fireCapacityWaits(state);
      },
    });

    expect(run.state.status).toBe('completed');
    expect(run.state.output).toBe('answer 2');
    const waits = run.events.flatMap((e) => (e.type === 'wait_requested' ? [e.data] : []));
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ kind: 'timer', reason: REASON });
    expect(waits[0]?.waitId.startsWith(CAPACITY_WAIT_PREFIX)).toBe(true);
    // Nothing was asked before the wait: the model was asked only once admitted.
    expect(askedWhileWaiting.every((n) => n === 0)).toBe(true);
    expect(asked).toHaveLength(2);
    // Each call was admitted on its own worst case under `provider/model`, with its place in the step.
    const [refused, first, second] = flow.asks;
    expect(flow.asks).toHaveLength(3);
    expect(refused?.cost).toEqual(first?.cost);
    expect(first).toMatchObject({ call: 0, cost: { model: 'openai/fake-1', outputTokens: 100 } });
    expect(first?.cost?.inputTokens).toBeGreaterThan(0);
    expect(second).toMatchObject({ call: 1, cost: { model: 'openai/fake-2', outputTokens: 7 } });
    // What each call used went back to flow control once it answered.
    expect(flow.settled).toEqual([
      { inputTokens: 20, outputTokens: 5 },
      { inputTokens: 20, outputTokens: 5 },
    ]);
    // One thought, the two answers: the wait made no decision asked twice.
    expect(run.events.filter((e) => e.type === 'thought')).toHaveLength(1);
  });

  it('given a recorded wait for capacity, when the run is replayed, then the code agent checks out against its log', async () => {
    const { provider } = fakeProvider();
    const flow = gate(2);
    const run = await simulateRun(request('f-2', 'twice'), served([twice], provider), {
      admit: flow.admit,
      before: fireCapacityWaits,
    });
    expect(run.events.filter((e) => e.type === 'wait_requested')).toHaveLength(2);

    const replayed = await replayRun({
      events: run.events,
      model: replayModelFor(run.events, { codeAgents: [twice] }),
    });
    expect(replayed).toMatchObject({ ok: true });
  });

  it('given an admitted call that fails, when decided, then its slot is given back and nothing counted as used', async () => {
    const { provider, asked } = fakeProvider(() => true);
    const flow = gate(0);
    await expect(
      simulateRun(request('f-3', 'twice'), served([twice], provider), { admit: flow.admit }),
    ).rejects.toThrow(/the provider went away/);
    expect(asked).toHaveLength(1);
    expect(flow.settled).toEqual([undefined]);
  });

  it('given a framework call naming its provider, when decided, then it is admitted under provider/model; one naming none goes unadmitted', async () => {
    const framework = (provider?: string) =>
      defineAgent({
        name: provider ? `framework-${provider}` : 'framework-anon',
        version: '1',
        tools: [],
        async run(ctx) {
          const answer = await ctx.modelCall({
            request: { prompt: 'hello' },
            model: 'gpt-x',
            ...(provider ? { provider } : {}),
            maxTokens: 9,
            inputChars: 40,
            invoke: () =>
              Promise.resolve({
                content: 'hi',
                usage: { inputTokens: 3, outputTokens: 1 },
                finishReason: 'stop',
                modelId: 'gpt-x',
              }),
          });
          return answer.content;
        },
      });
    const named = framework('anthropic');
    const anon = framework();
    const { provider } = fakeProvider();
    const flow = gate(0);
    const model = served([named, anon], provider);
    const one = await simulateRun(request('f-4', named.name), model, { admit: flow.admit });
    const two = await simulateRun(request('f-5', anon.name), model, { admit: flow.admit });

    expect([one.state.status, two.state.status]).toEqual(['completed', 'completed']);
    expect(flow.asks.map((a) => a.cost)).toEqual([
      { model: 'anthropic/gpt-x', inputTokens: 10, outputTokens: 9 },
    ]);
    expect(flow.settled).toEqual([{ inputTokens: 3, outputTokens: 1 }]);
  });
});

describe('the code agent of docs/flow-control.md', () => {
  // The page's example, as written, in a module of its own beside this file (so its imports resolve).
  const dir = mkdtempSync(join(fileURLToPath(new URL('.', import.meta.url)), '.flow-doc-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('admits each of its calls under the limits of the model it names, on its worst case', async () => {
    const doc = readFileSync(join(repoRoot(), 'docs/flow-control.md'), 'utf8');
    const block = /```ts\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('## Code agents')))?.[1] ?? '';
    expect(block).toContain('defineAgent(');
    const file = join(dir, 'example.ts');
    writeFileSync(file, `import { defineAgent } from '@dura/code-agents';\n${block}`);
    const { triage } = (await import(file)) as { triage: AnyCodeAgent };

    const { provider, asked } = fakeProvider();
    const flow = gate(0);
    const run = await simulateRun(
      { ...request('doc-1', 'triage'), input: 'the app crashes' },
      served([triage], provider),
      { admit: flow.admit },
    );
    expect(run.state.status).toBe('completed');
    expect(asked.map((r) => r.model)).toEqual(['gpt-4o-mini', 'gpt-4o']);
    expect(flow.asks.map((a) => [a.cost?.model, a.cost?.outputTokens])).toEqual([
      ['openai/gpt-4o-mini', 256],
      ['openai/gpt-4o', 256],
    ]);
  });
});
