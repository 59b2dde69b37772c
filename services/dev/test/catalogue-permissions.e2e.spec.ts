// The shipped NATS permissions (deploy/nats/permissions.conf) and the catalogue bucket: a planner writes only
// agent entries, a gateway only tool entries, the projector reads both and writes none, an application none.
import { describe, expect, it } from 'vitest';
import { jetstream } from '@nats-io/jetstream';
import {
  CATALOGUE_VERSION,
  catalogueAgentKey,
  catalogueToolKey,
  type CatalogueAgent,
  type CatalogueTool,
} from '@dura/contracts';
import { createCatalogueWriter, readCatalogue } from '@dura/event-store';
import { expectDenied, useSecuredNats } from './secured-nats';

const { as } = useSecuredNats();

const announcedAt = new Date().toISOString();
const agent: CatalogueAgent = {
  v: CATALOGUE_VERSION,
  name: 'support',
  version: '1',
  kind: 'llm',
  tools: [],
  access: { tenants: {}, otherTenants: true },
  announcedAt,
};
const tool: CatalogueTool = {
  v: CATALOGUE_VERSION,
  name: 'echo',
  description: 'echoes',
  safety: 'read_only',
  limits: { timeoutMs: 60_000, attempts: 3, approval: { required: false } },
  announcedAt,
};
const agentEntry = { key: catalogueAgentKey(agent.name, agent.version), value: agent };
const toolEntry = { key: catalogueToolKey(tool.name), value: tool };

describe('the catalogue bucket under the shipped permissions', () => {
  it('a planner creates the bucket and writes agent entries, never a tool entry', async () => {
    const writer = createCatalogueWriter({ js: jetstream(await as('planner')) });
    await writer.put([agentEntry]);
    await expectDenied(writer.put([{ ...toolEntry, key: catalogueToolKey('forged') }]));
  });

  it('a gateway writes tool entries, never an agent entry', async () => {
    const writer = createCatalogueWriter({ js: jetstream(await as('gateway')) });
    await writer.put([toolEntry]);
    await expectDenied(writer.put([{ ...agentEntry, key: catalogueAgentKey('forged', '1') }]));
  });

  it('the projector reads every entry and may write none', async () => {
    const js = jetstream(await as('projector'));
    const contents = await readCatalogue(js);
    expect(contents).toEqual({ agents: [agent], tools: [tool], skipped: [] });
    await expectDenied(createCatalogueWriter({ js }).put([agentEntry]));
  });

  it('an application (user client) may neither read nor write it', async () => {
    const js = jetstream(await as('client'));
    await expectDenied(readCatalogue(js));
    await expectDenied(createCatalogueWriter({ js }).put([toolEntry]));
  });
});
