import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RunRequestSchema } from '@dura/contracts';
import { builtinRegistry } from '@dura/tools';
import { checkPlan } from '../src/plan-check';
import { AgentRegistry, loadAgentRegistry } from '@dura/agents';

const DIR = fileURLToPath(new URL('../../../examples/agents/', import.meta.url));

describe('the example agents the README runs', () => {
  it('load, and every example request is valid and names only served agents and known tools', async () => {
    const agents = await loadAgentRegistry(`${DIR}agents.json`);
    expect(agents.names()).toEqual(['assistant', 'builder', 'claude', 'fanout', 'releaser']);
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

  it('refuses a parallel step that uses the result of a step in its own group', () => {
    const scripted = (steps: unknown[]) => ({
      agents: [{ name: 'fan', version: '1', model: { provider: 'scripted', steps } }],
    });
    const build = (service: string) => ({ tool: 'demo.build', args: { service, commit: 'c0ffee1' } });
    expect(
      () =>
        new AgentRegistry(
          scripted([
            build('a'),
            { parallel: [build('b'), { tool: 'echo', args: { tag: '$steps.2.imageTag' } }] },
          ]) as never,
        ),
    ).toThrow(/steps\.1\.parallel\.1\.args: \$steps\.2\.imageTag must reference an earlier step \(1\.\.1\)/);
    expect(
      new AgentRegistry(
        scripted([
          build('a'),
          { parallel: [build('b'), { tool: 'echo', args: { tag: '$steps.1.imageTag' } }] },
        ]) as never,
      ).names(),
    ).toEqual(['fan']);
  });
});
