// The AI SDK example (examples/ai-sdk, docs/ai-sdk.md) on the real stack: planner, gateway and projector as
// their own processes on real NATS and Postgres, loading the example module (DURA_AGENTS) and its tool
// (DURA_TOOLS_MODULES); the agent's streamText loop asks a fake OpenAI-compatible model on real HTTP. The run
// completes with each turn asked once, `dura replay` finds no divergence, the page's example is the file's,
// and the documented `npm run dev` command runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fold } from '@dura/core';
import { repoRoot, useFakeLlmServer, type FakeLlmReply } from '@dura/testing';
import { useCrashSystem, watchToEnd } from './crash-harness';
import { ledgerOf, toolMessages, type WireBody } from './agent-support';
import { dura } from './system';
import { EXAMPLE_TOOLS, RESEARCH_QUESTION as QUESTION, expectResearchRunsOnDev } from './examples-support';

const EXAMPLES = fileURLToPath(new URL('../../../examples/ai-sdk/index.ts', import.meta.url));
const ANSWER = 'Record each step (n2), key each effect (n3), commit with an outbox (n5).';

/** Two searches at once, a follow-up search, then the answer; anything else is refused. */
function research(body: WireBody): FakeLlmReply {
  const results = toolMessages(body).length;
  const search = (query: string) => ({ name: 'research_search', arguments: { query } });
  if (results === 0 && body.messages.some((m) => m.role === 'user' && m.content === QUESTION))
    return { kind: 'message', toolCalls: [search('durable execution'), search('idempotency keys')] };
  if (results === 2) return { kind: 'message', toolCalls: [search('outbox pattern')] };
  if (results === 3) return { kind: 'message', content: ANSWER };
  return {
    kind: 'status',
    status: 400,
    body: { error: { message: `unexpected request (${results} results)` } },
  };
}

const model = useFakeLlmServer({ provider: 'openai', respond: ({ body }) => research(body as WireBody) });

const crash = useCrashSystem(['planner', 'tool-gateway', 'projector'], {
  env: (name): Record<string, string> => ({
    DURA_TOOLS_MODULES: EXAMPLE_TOOLS,
    ...(name === 'planner' ? { DURA_AGENTS: EXAMPLES, RESEARCH_MODEL_URL: model().url } : {}),
  }),
});

const OUTPUT = {
  question: QUESTION,
  answer: ANSWER,
  steps: 3,
  sources: ['n2', 'n3', 'n5'],
};

describe('the AI SDK research example (ai-researcher)', () => {
  it('searches twice at once, follows up, answers; each turn asked once; replay finds no divergence', async () => {
    const sys = crash();
    const runId = 'example-ai-research';
    const since = model().requests.length;
    await sys.submit({
      runId,
      agent: { kind: 'agent', name: 'ai-researcher' },
      input: { question: QUESTION },
    });
    const log = await watchToEnd(sys, runId, 180_000);
    expect(log.at(-1)?.type, log.map((e) => e.type).join(', ')).toBe('run_completed');
    expect(fold(log).output).toEqual(OUTPUT);
    // The two searches of one answer are one decision (parallel intents); the follow-up is the next.
    const decisions = log.flatMap((e) =>
      e.type === 'thought' && e.data.decision.kind === 'tool_calls'
        ? [e.data.decision.calls.map((c) => c.args['query'])]
        : [],
    );
    expect(decisions).toEqual([['durable execution', 'idempotency keys'], ['outbox pattern']]);
    expect(model().requests.length - since, 'model turns asked').toBe(3);
    expect((await ledgerOf(sys, runId)).map((row) => row.tool)).toEqual(Array(3).fill('research.search'));

    const replay = await dura(sys, ['replay', runId, '--agents', EXAMPLES]);
    expect(replay.output).toContain(`no divergence (${log.length} events checked)`);
  });

  it('is the example docs/ai-sdk.md shows', () => {
    const page = readFileSync(join(repoRoot(), 'docs/ai-sdk.md'), 'utf8');
    const file = readFileSync(join(repoRoot(), 'examples/ai-sdk/researcher.ts'), 'utf8');
    const shown = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
    const agents = shown.filter((block) => block.includes('defineAgent('));
    expect(agents).toHaveLength(1);
    expect(file).toContain(agents[0]);
  });

  it('runs as documented on `npm run dev -- --once --run examples/ai-sdk/research.json`', async () => {
    await expectResearchRunsOnDev('ai-sdk', model().url);
  }, 180_000);
});
