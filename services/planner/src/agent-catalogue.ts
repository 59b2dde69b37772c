import * as z from 'zod';
import { CATALOGUE_VERSION, catalogueAgentKey, type AgentAccess, type CatalogueAgent } from '@dura/contracts';
import type { loadAgents } from '@dura/agents';
import type { CatalogueEntry } from '@dura/event-store';
import { agentAllowed, type ToolAuthorization } from './tool-authorization';

type LoadedAgents = Awaited<ReturnType<typeof loadAgents>>;

/** Which tenants may start `name@version` under the planner's policy (`PLANNER_TENANT_AGENTS`). */
export function accessOf(
  policy: ToolAuthorization['tenantAgents'],
  name: string,
  version: string,
): AgentAccess {
  if (!policy) return { tenants: {}, otherTenants: true };
  const tenants = Object.fromEntries(
    [...policy.byTenant].map(([tenant, grants]) => [tenant, agentAllowed(grants, name, version)]),
  );
  return { tenants, otherTenants: policy.fallback ? agentAllowed(policy.fallback, name, version) : false };
}

/** The input's JSON Schema, or undefined when the agent declares none (or it has no JSON Schema form). */
function inputSchemaOf(schema: z.ZodType | undefined): Record<string, unknown> | undefined {
  if (!schema) return undefined;
  try {
    return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  } catch {
    return undefined;
  }
}

/** The catalogue entries of every agent version this planner serves, JSON and code agents alike. */
export function agentCatalogue(
  loaded: LoadedAgents,
  policy: ToolAuthorization['tenantAgents'],
  now: Date,
): CatalogueEntry[] {
  const announcedAt = now.toISOString();
  const entry = (agent: Omit<CatalogueAgent, 'v' | 'access' | 'announcedAt'>): CatalogueEntry => ({
    key: catalogueAgentKey(agent.name, agent.version),
    value: {
      v: CATALOGUE_VERSION,
      ...agent,
      access: accessOf(policy, agent.name, agent.version),
      announcedAt,
    },
  });
  const { registry, codeAgents } = loaded;
  const json = registry.names().flatMap((name) =>
    registry.versions(name).flatMap((version) => {
      const agent = registry.get(name, version);
      if (!agent) return [];
      return [
        entry({
          name,
          version,
          kind: agent.model.provider === 'scripted' ? 'json' : 'llm',
          ...(agent.description ? { description: agent.description } : {}),
          tools: [...agent.tools],
          ...(agent.concurrency ? { concurrency: { ...agent.concurrency } } : {}),
        }),
      ];
    }),
  );
  const code = codeAgents.map((agent) => {
    const inputSchema = inputSchemaOf(agent.input);
    return entry({
      name: agent.name,
      version: agent.version,
      kind: 'code',
      ...(inputSchema ? { inputSchema } : {}),
      tools: [...agent.tools],
      ...(agent.concurrency ? { concurrency: { ...agent.concurrency } } : {}),
    });
  });
  return [...json, ...code];
}
