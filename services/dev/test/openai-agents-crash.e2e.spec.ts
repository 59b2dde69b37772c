// The crash points of an OpenAI Agents SDK agent on separate planner, tool-gateway and projector processes
// (the cases are in openai-agents-crash-cases.ts): the planner is SIGKILLed, restarted, and every run completes.
// The docs' example (examples/openai-agents, docs/openai-agents.md) runs on the same stack.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fold } from '@dura/core';
import { repoRoot } from '@dura/testing';
import { useCrashSystem, watchToEnd, WITNESS_TOOLS } from './crash-harness';
import { ledgerOf } from './agent-support';
import {
  agentsCrashCases,
  EXAMPLE_ANSWER,
  EXAMPLE_QUESTION,
  expectShopped,
  PATIENT_TOOLS_ENV,
  useAgentsModels,
} from './openai-agents-crash-cases';

const EXAMPLES = fileURLToPath(new URL('../../../examples/openai-agents/index.ts', import.meta.url));
const EXAMPLE_TOOLS = fileURLToPath(new URL('../../../examples/code-agents/tools.ts', import.meta.url));

const models = useAgentsModels();
const crash = useCrashSystem(['tool-gateway', 'projector'], {
  env: (name): Record<string, string> => ({
    ...PATIENT_TOOLS_ENV,
    DURA_TOOLS_MODULES: `${WITNESS_TOOLS},${EXAMPLE_TOOLS}`,
    ...(name === 'planner' ? models().env() : {}),
  }),
});

describe('an Agents SDK agent on separate services, its planner killed with SIGKILL', () => {
  agentsCrashCases('planner', crash, models);
});

describe('an Agents SDK agent asking for whole responses (getResponse, not streamed)', () => {
  it('hands off, charges three times, waits for the approval, answers; each model call asked once', async () => {
    const sys = crash();
    await sys.restart('planner', undefined, models().env());
    const runId = 'agents-whole-responses';
    await sys.submit({ runId, agent: { kind: 'agent', name: 'agents-shopper-whole' }, input: null });
    await expectShopped(sys, runId);
    expect(models().asked(runId)).toEqual([1, 1, 1, 1, 1]);
    const asked = models().fake.requests.filter((r) => JSON.stringify(r.body).includes(`shop ${runId}`));
    expect(asked).toHaveLength(5);
    for (const request of asked) expect(request.body.stream).not.toBe(true);
  });
});

describe('the Agents SDK help-desk example (agents-help-desk)', () => {
  it('hands off, searches, answers; each model call asked once; the page shows the file', async () => {
    const sys = crash();
    await sys.restart('planner', undefined, { ...models().env(), DURA_AGENTS: EXAMPLES });
    const runId = 'example-agents-help-desk';
    // The request the page runs with `npm run dev -- --once --run`, here against the fake model.
    const request = JSON.parse(
      readFileSync(join(repoRoot(), 'examples/openai-agents/help-desk.json'), 'utf8'),
    ) as { agent: { kind: 'agent'; name: string }; input: { question: string } };
    expect(request.input.question).toBe(EXAMPLE_QUESTION);
    await sys.submit({ runId, agent: request.agent, input: request.input });
    const log = await watchToEnd(sys, runId, 120_000).catch(() => []);
    const told = `${log.map((e) => e.type).join(', ')}\n${sys.proc('planner').output().slice(-3000)}`;
    expect(log.at(-1)?.type, told).toBe('run_completed');
    expect(fold(log).output).toEqual({
      question: EXAMPLE_QUESTION,
      answer: EXAMPLE_ANSWER,
      answeredBy: 'researcher',
    });
    expect(models().asked(EXAMPLE_QUESTION).slice(0, 3)).toEqual([1, 1, 1]);
    expect((await ledgerOf(sys, runId)).map((row) => row.tool)).toEqual(['research.search']);

    const page = readFileSync(join(repoRoot(), 'docs/openai-agents.md'), 'utf8');
    const file = readFileSync(join(repoRoot(), 'examples/openai-agents/help-desk.ts'), 'utf8');
    const shown = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
    const agents = shown.filter((block) => block.includes('defineAgent('));
    expect(agents).toHaveLength(1);
    expect(file).toContain(agents[0]);
  });
});
