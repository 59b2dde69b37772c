import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { AgentRegistry } from '@dura/agents';
import { CatalogueAgentSchema, mayStart } from '@dura/contracts';
import { accessOf, agentCatalogue } from '../src/agent-catalogue';
import { parseTenantAgents, UNSET_TENANT_AGENTS } from '../src/tool-authorization';

const now = new Date('2026-11-29T01:00:00.000Z');
const registry = new AgentRegistry({
  agents: [
    {
      name: 'support',
      version: '2',
      description: 'Answers tickets.',
      model: { provider: 'openai', model: 'gpt-x', baseUrl: 'http://127.0.0.1:1' },
      tools: ['echo'],
    },
    {
      name: 'support',
      version: '1',
      model: { provider: 'openai', model: 'gpt-x', baseUrl: 'http://127.0.0.1:1' },
    },
    { name: 'deploy', version: '1', model: { provider: 'scripted', steps: [{ tool: 'echo', args: {} }] } },
  ],
});
/** A code agent as `defineAgent` makes it (the planner holds them as loaded from DURA_AGENTS). */
const greeter = {
  kind: 'code' as const,
  name: 'greeter',
  version: '3',
  input: z.object({ name: z.string().min(1), loud: z.boolean().default(false) }),
  tools: ['echo'],
  run: () => Promise.resolve('hi'),
};

describe('the agents a planner announces', () => {
  it('one valid entry per served version: kind, description, tools, and a code agent its input schema', () => {
    const entries = agentCatalogue({ registry, codeAgents: [greeter] }, undefined, now);
    expect(entries.map((e) => e.key)).toEqual([
      'agent.deploy.1',
      'agent.support.1',
      'agent.support.2',
      'agent.greeter.3',
    ]);
    for (const { value } of entries) expect(CatalogueAgentSchema.parse(value)).toEqual(value);
    const byKey = Object.fromEntries(entries.map((e) => [e.key, e.value]));
    expect(byKey['agent.deploy.1']).toMatchObject({ kind: 'json', tools: [] });
    expect(byKey['agent.support.2']).toMatchObject({
      kind: 'llm',
      description: 'Answers tickets.',
      tools: ['echo'],
    });
    expect(byKey['agent.greeter.3']).toMatchObject({
      kind: 'code',
      announcedAt: now.toISOString(),
      inputSchema: {
        type: 'object',
        properties: { name: { type: 'string', minLength: 1 }, loud: { type: 'boolean', default: false } },
        required: ['name'],
      },
    });
    expect(byKey['agent.support.1']).not.toHaveProperty('inputSchema');
  });

  it('says which tenants may start each version, as PLANNER_TENANT_AGENTS does', () => {
    const policy = parseTenantAgents('acme=support@2|deploy,globex=-,*=deploy');
    const may = (name: string, version: string, tenant: string) =>
      mayStart(accessOf(policy, name, version), tenant);
    expect(may('support', '2', 'acme')).toBe(true);
    expect(may('support', '1', 'acme')).toBe(false);
    expect(may('deploy', '1', 'globex')).toBe(false);
    expect(may('deploy', '1', 'initech')).toBe(true);
    expect(may('support', '2', 'initech')).toBe(false);
    // Unset: tenant default may start every agent, no other tenant any; no policy at all (embedding): everyone.
    expect(mayStart(accessOf(UNSET_TENANT_AGENTS, 'support', '2'), 'default')).toBe(true);
    expect(mayStart(accessOf(UNSET_TENANT_AGENTS, 'support', '2'), 'acme')).toBe(false);
    expect(mayStart(accessOf(undefined, 'support', '2'), 'acme')).toBe(true);
  });
});
