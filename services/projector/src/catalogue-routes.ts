import type { JetStreamClient } from '@nats-io/jetstream';
import { mayStart, type AgentList, type CatalogueAgent, type ToolList } from '@dura/contracts';
import { readCatalogue, type CatalogueContents } from '@dura/event-store';
import type { Logger } from '@dura/service-kit';
import { tenantFilter } from './auth/caller';
import type { ApiRoute } from './auth/guard';

const byVersion = new Intl.Collator('en', { numeric: true }).compare;
/** Bad entries logged so far (each once): a bad entry stays until its writer fixes or its TTL drops it. */
const MAX_LOGGED_BAD = 1000;

/**
 * `GET /agents` and `GET /tools` (scope `read`): the catalogue the planners and gateways announce (KV
 * `dura_catalogue`). A tenant's caller sees the agent versions its tenant may start, as the planners'
 * `PLANNER_TENANT_AGENTS` says; tools are the deployment's, the same for every caller. An entry that does not
 * validate is left out and logged, never an error of the route.
 */
export function catalogueRoutes(deps: { js: JetStreamClient; log?: Logger }): ApiRoute[] {
  const logged = new Set<string>();
  const read = async (): Promise<CatalogueContents> => {
    const contents = await readCatalogue(deps.js);
    for (const { key, problem } of contents.skipped) {
      const id = `${key}\0${problem}`;
      if (logged.has(id) || logged.size >= MAX_LOGGED_BAD) continue;
      logged.add(id);
      deps.log?.warn('a catalogue entry is not valid; left out of GET /agents and /tools', { key, problem });
    }
    return contents;
  };
  return [
    {
      method: 'GET',
      path: '/agents',
      scope: 'read',
      async handle({ caller }) {
        const tenant = tenantFilter(caller);
        const { agents } = await read();
        const visible = agents.filter((agent) => tenant === undefined || mayStart(agent.access, tenant));
        return { status: 200, body: agentList(visible) };
      },
    },
    {
      method: 'GET',
      path: '/tools',
      scope: 'read',
      async handle() {
        const { tools } = await read();
        const body: ToolList = {
          tools: tools.map(({ v: _v, ...tool }) => tool).sort((a, b) => a.name.localeCompare(b.name)),
        };
        return { status: 200, body };
      },
    },
  ];
}

/** Agent versions grouped by name, names in order, versions oldest first (the last is what a run gets). */
export function agentList(entries: readonly CatalogueAgent[]): AgentList {
  const byName = new Map<string, CatalogueAgent[]>();
  for (const entry of entries) byName.set(entry.name, [...(byName.get(entry.name) ?? []), entry]);
  return {
    agents: [...byName.keys()].sort().map((name) => ({
      name,
      versions: (byName.get(name) ?? [])
        .sort((a, b) => byVersion(a.version, b.version))
        .map(({ v: _v, name: _n, access: _a, ...version }) => version),
    })),
  };
}
