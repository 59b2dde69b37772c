// GET /agents and GET /tools over a real catalogue bucket: empty before any service announced, entries as
// announced (versions grouped, oldest first), a tenant's caller sees only the agent versions its tenant may
// start, a bad entry is left out and logged (never an error), and a credential without `read` is refused.
import { describe, expect, it, vi } from 'vitest';
import { Kvm } from '@nats-io/kv';
import {
  BUCKETS,
  CATALOGUE_VERSION,
  catalogueAgentKey,
  catalogueToolKey,
  type CatalogueAgent,
  type CatalogueTool,
} from '@dura/contracts';
import { createCatalogueWriter } from '@dura/event-store';
import { createLogger } from '@dura/service-kit';
import { useProjectorApi, tokenAuth } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const TOKENS = {
  operator: 'operator-0123456789abcdef',
  acme: 'acme-read-0123456789abcdef',
  globex: 'globex-read-0123456789abcdef',
  submitOnly: 'submit-only-0123456789abcdef',
};
const tokenFile = JSON.stringify([
  { name: 'operator', token: TOKENS.operator, tenant: '*', scopes: ['read'] },
  { name: 'acme', token: TOKENS.acme, tenant: 'acme', scopes: ['read', 'submit'] },
  { name: 'globex', token: TOKENS.globex, tenant: 'globex', scopes: ['read'] },
  { name: 'submit-only', token: TOKENS.submitOnly, tenant: '*', scopes: ['submit'] },
]);

const at = '2026-11-29T01:00:00.000Z';
const agent = (name: string, version: string, extra: Partial<CatalogueAgent> = {}): CatalogueAgent => ({
  v: CATALOGUE_VERSION,
  name,
  version,
  kind: 'code',
  tools: ['echo'],
  // acme may start it, globex not, every other tenant may.
  access: { tenants: { acme: true, globex: false }, otherTenants: true },
  announcedAt: at,
  ...extra,
});
const tool: CatalogueTool = {
  v: CATALOGUE_VERSION,
  name: 'http.request',
  description: 'Calls an HTTP API.',
  safety: 'idempotent',
  limits: {
    concurrency: 4,
    timeoutMs: 30_000,
    attempts: 3,
    approval: { required: true, timeoutSeconds: 60, onTimeout: 'reject' },
  },
  announcedAt: at,
};

const logLines: string[] = [];
const log = createLogger({ service: 'projector', level: 'info', write: (line) => logLines.push(line) });
// No projector runs: these routes read the catalogue bucket only.
const sys = useProjectorApi(() => ({ auth: tokenAuth(tokenFile), log }), { startProjector: false });

async function get(path: string, token: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${sys().http.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('the catalogue routes', () => {
  it('answer empty lists while no service has announced anything (no bucket yet)', async () => {
    expect(await get('/agents', TOKENS.operator)).toEqual({ status: 200, body: { agents: [] } });
    expect(await get('/tools', TOKENS.operator)).toEqual({ status: 200, body: { tools: [] } });
  });

  it('list what the services announced: agents by name with versions oldest first, tools with limits', async () => {
    const writer = createCatalogueWriter({ js: sys().setup.js });
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    await writer.put([
      { key: catalogueAgentKey('weather', '10'), value: agent('weather', '10', { inputSchema: schema }) },
      { key: catalogueAgentKey('weather', '9'), value: agent('weather', '9', { kind: 'llm' }) },
      {
        key: catalogueAgentKey('billing', '1'),
        value: agent('billing', '1', {
          kind: 'json',
          access: { tenants: { acme: true }, otherTenants: false },
        }),
      },
      { key: catalogueToolKey(tool.name), value: tool },
    ]);
    const agents = await get('/agents', TOKENS.operator);
    expect(agents.status).toBe(200);
    expect(agents.body).toEqual({
      agents: [
        { name: 'billing', versions: [{ version: '1', kind: 'json', tools: ['echo'], announcedAt: at }] },
        {
          name: 'weather',
          versions: [
            { version: '9', kind: 'llm', tools: ['echo'], announcedAt: at },
            { version: '10', kind: 'code', inputSchema: schema, tools: ['echo'], announcedAt: at },
          ],
        },
      ],
    });
    const { v: _v, ...listed } = tool;
    expect(await get('/tools', TOKENS.operator)).toEqual({ status: 200, body: { tools: [listed] } });
  });

  it("show a tenant's caller only the agent versions its tenant may start; tools are the same for all", async () => {
    const names = async (token: string) =>
      ((await get('/agents', token)).body['agents'] as { name: string }[]).map((a) => a.name);
    expect(await names(TOKENS.acme)).toEqual(['billing', 'weather']);
    expect(await names(TOKENS.globex)).toEqual([]);
    expect((await get('/tools', TOKENS.globex)).body['tools']).toHaveLength(1);
  });

  it('leave out an entry that does not validate, log it once, and keep answering', async () => {
    const kv = await new Kvm(sys().setup.js).open(BUCKETS.catalogue);
    await kv.put(catalogueAgentKey('broken', '1'), JSON.stringify({ v: 1, name: 'broken', kind: 'magic' }));
    await kv.put(catalogueToolKey('garbled'), 'not json at all');
    for (let i = 0; i < 2; i++) {
      const agents = await get('/agents', TOKENS.operator);
      expect(agents.status).toBe(200);
      expect((agents.body['agents'] as { name: string }[]).map((a) => a.name)).toEqual([
        'billing',
        'weather',
      ]);
      const tools = await get('/tools', TOKENS.operator);
      expect((tools.body['tools'] as { name: string }[]).map((t) => t.name)).toEqual(['http.request']);
    }
    // Logged as it is read (synchronously), once per entry and problem however often it is read.
    const bad = logLines.filter((line) => line.includes('catalogue entry is not valid'));
    expect(bad.filter((line) => line.includes('agent.broken.1'))).toHaveLength(1);
    expect(bad.filter((line) => line.includes('tool.garbled'))).toHaveLength(1);
  });

  it('refuse a credential without scope read (403), and a request without one (401)', async () => {
    const refused = await get('/agents', TOKENS.submitOnly);
    expect(refused.status).toBe(403);
    expect((refused.body['error'] as { code: string }).code).toBe('insufficient_scope');
    expect((await fetch(`${sys().http.url}/tools`)).status).toBe(401);
  });
});
