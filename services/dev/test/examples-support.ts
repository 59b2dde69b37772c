// Shared by the example tests (ai-sdk-examples, code-agent-examples): the examples' tool module, the research
// question, and the research request run as the docs show it, on `npm run dev -- --once --run`.
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { devOnce } from './system';

/** The examples' tools (examples/code-agents/tools.ts), which the research examples search with. */
export const EXAMPLE_TOOLS = fileURLToPath(
  new URL('../../../examples/code-agents/tools.ts', import.meta.url),
);
export const RESEARCH_QUESTION = 'How does durable execution keep side effects from running twice?';

/**
 * Runs `examples/<example>/research.json` with `npm run dev -- --once --run`, the example's agents and the
 * fake model at `modelUrl`: it exits 0 after three searches with a completed run.
 */
export async function expectResearchRunsOnDev(
  example: 'ai-sdk' | 'code-agents',
  modelUrl: string,
): Promise<void> {
  const { code, output } = await devOnce(`examples/${example}/research.json`, {
    DURA_AGENTS: `examples/${example}/index.ts`,
    DURA_TOOLS_MODULES: 'examples/code-agents/tools.ts',
    RESEARCH_MODEL_URL: modelUrl,
  });
  expect(code, output).toBe(0);
  expect(output.match(/tool_call_completed/g)).toHaveLength(3);
  // Exit code 0: the run completed (the printed output is cut short).
  expect(output).toMatch(/run_completed +output \{"question":"How does durable execution/);
}
