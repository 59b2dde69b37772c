import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RunRequestSchema } from '@dura/contracts';
import { builtinRegistry } from '@dura/tools';
import { checkPlan } from '../src/plan-check';
import { loadAgentRegistry } from '../src/agents/registry';

const DIR = fileURLToPath(new URL('../../../examples/agents/', import.meta.url));

describe('the example agents the README runs', () => {
  it('load, and every example request is valid and names only served agents and known tools', async () => {
    const agents = await loadAgentRegistry(`${DIR}agents.json`);
    expect(agents.names()).toEqual(['assistant', 'builder', 'claude', 'releaser']);
    const tools = builtinRegistry();
    const requests = readdirSync(DIR).filter((file) => file !== 'agents.json' && file.endsWith('.json'));
    expect(requests.length).toBeGreaterThanOrEqual(3);
    for (const file of requests) {
      const request = RunRequestSchema.parse(JSON.parse(readFileSync(`${DIR}${file}`, 'utf8')));
      if (request.agent.kind === 'agent') expect(agents.get(request.agent.name), file).toBeDefined();
      expect(checkPlan(request, tools), file).toBeUndefined();
    }
  });

  it('refuses a broken agents file, naming the file and the problem', async () => {
    await expect(loadAgentRegistry(`${DIR}release.json`)).rejects.toThrow(
      /release\.json \(DURA_AGENTS\).*agents/s,
    );
  });
});
