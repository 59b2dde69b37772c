// Two tenants and an operator against the shipped configuration: the NATS permissions of deploy/nats (each
// service its own user), PROJECTOR_AUTH_REQUIRED=true with a tokens file, inline plans off (the production
// default) and agents per tenant. globex attacks acme through every door that starts something: POST /runs,
// MCP start_run, a child run, a fork, schedules and their manual trigger. A payment witness counts every
// charge: only acme's own run ever charges.
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { scriptedAgent, useHostileStack } from './hostile-support';
import { eventually } from './system';

const CLI_MAIN = fileURLToPath(new URL('../../cli/src/main.ts', import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const TOKENS = {
  acme: 'acme-app-token-5b1f0c9e2d',
  acmeSignal: 'acme-signal-token-8e3a7d41',
  globex: 'globex-app-token-c47d2e9a',
  operator: 'operator-token-1f6b3e8c5a',
};
const stack = useHostileStack({
  name: 'dura-hostile-tenants-',
  agents: [
    scriptedAgent('payment', ['pay.charge'], { tool: 'pay.charge', args: { amount: 5000 } }),
    scriptedAgent('spawner', [], { tool: 'dura.run_agent', args: { agent: 'payment' } }),
    scriptedAgent('quick', ['echo'], { tool: 'echo', args: { hi: 1 } }),
  ],
  tenantAgents: 'acme=payment|spawner|quick,globex=spawner|quick',
  tokens: [
    {
      name: 'acme-app',
      token: TOKENS.acme,
      tenant: 'acme',
      scopes: ['read', 'submit', 'signal', 'schedule'],
    },
    { name: 'acme-signal', token: TOKENS.acmeSignal, tenant: 'acme', scopes: ['read', 'signal'] },
    {
      name: 'globex-app',
      token: TOKENS.globex,
      tenant: 'globex',
      scopes: ['read', 'submit', 'signal', 'cancel', 'schedule'],
    },
    { name: 'operator', token: TOKENS.operator, tenant: '*', scopes: ['read'] },
  ],
});
let mcp: Client | undefined;

afterAll(async () => {
  await mcp?.close();
});

interface Answer {
  status: number;
  body: { error?: { code: string; message: string }; [key: string]: unknown };
}

async function api(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  token: string,
  o: { body?: unknown; key?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  // Every POST is JSON (the API refuses any other with 415), a body-less one too.
  if (o.body !== undefined || method === 'POST') headers['content-type'] = 'application/json';
  if (o.key !== undefined) headers['idempotency-key'] = o.key;
  const res = await fetch(`${stack().apiUrl}${path}`, {
    method,
    headers,
    ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Answer['body']) : {} };
}

const agentRun = (name: string) => ({ agent: { kind: 'agent', name } });

/** Submits over POST /runs and answers the run id the API gave (202 expected). */
async function submit(token: string, key: string, agent: string): Promise<string> {
  const answer = await api('POST', '/runs', token, { body: agentRun(agent), key });
  expect(answer.status, JSON.stringify(answer.body)).toBe(202);
  return String(answer.body['runId']);
}

interface RunView {
  status: string;
  tenant?: string;
  error?: { code: string; message: string };
}

/** The run as `token` sees it, once its status is one of `statuses`. */
function untilRun(runId: string, token: string, statuses: string[]): Promise<RunView> {
  return eventually(
    async () => {
      const answer = await api('GET', `/runs/${runId}`, token);
      const run = answer.body as unknown as RunView;
      return answer.status === 200 && statuses.includes(run.status) ? run : undefined;
    },
    `run ${runId} ${statuses.join(' or ')}`,
    60_000,
  );
}

const charges = () => stack().witness.totals().effects;
let acmePayment: string;

describe('a tenant against another, under the shipped configuration', () => {
  it('acme runs its own payment agent through POST /runs: the stack works, the witness charges once', async () => {
    acmePayment = await submit(TOKENS.acme, 'pay-1', 'payment');
    await untilRun(acmePayment, TOKENS.acme, ['completed']);
    expect(charges()).toBe(1);
  });

  it("globex starts acme's payment agent through POST /runs: rejected, nothing charged", async () => {
    const runId = await submit(TOKENS.globex, 'steal-1', 'payment');
    const run = await untilRun(runId, TOKENS.globex, ['rejected']);
    expect(run.error?.code).toBe('agent_not_allowed');
    expect(run.error?.message).toMatch(/tenant globex may not start agent payment/);
    expect(charges()).toBe(1);
  });

  it("globex starts acme's payment agent through MCP start_run: rejected, nothing charged", async () => {
    mcp = new Client({ name: 'hostile', version: '1' });
    await mcp.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', tsx, CLI_MAIN, 'mcp'],
        env: { ...getDefaultEnvironment(), DURA_API_URL: stack().apiUrl, DURA_API_TOKEN: TOKENS.globex },
        stderr: 'pipe',
      }),
    );
    const started = await mcp.callTool({
      name: 'start_run',
      arguments: { agent: 'payment', runId: 'mcp-steal' },
    });
    expect(started.isError, JSON.stringify(started.content)).toBeFalsy();
    const runId = String((started.structuredContent as { runId: string }).runId);
    expect((await untilRun(runId, TOKENS.globex, ['rejected'])).error?.code).toBe('agent_not_allowed');
    expect(charges()).toBe(1);
  });

  it("globex asks for a child run of acme's payment agent: the child is rejected, the parent fails", async () => {
    const parent = await submit(TOKENS.globex, 'spawn-1', 'spawner');
    await untilRun(parent, TOKENS.globex, ['failed']);
    const child = await untilRun(`${parent}-c1`, TOKENS.globex, ['rejected']);
    expect(child.error?.message).toMatch(/tenant globex may not start agent payment/);
    expect(charges()).toBe(1);
  });

  it('a token that may signal but not submit cannot fork a finished payment run (403); another tenant gets 404', async () => {
    const forked = await api('POST', `/runs/${acmePayment}/fork`, TOKENS.acmeSignal, { body: { atSeq: 1 } });
    expect(forked.status).toBe(403);
    expect(forked.body.error).toMatchObject({
      code: 'insufficient_scope',
      message: expect.stringMatching(/needs scope "submit"/),
    });
    const other = await api('POST', `/runs/${acmePayment}/fork`, TOKENS.globex, { body: { atSeq: 1 } });
    expect(other.status).toBe(404);
    expect(charges()).toBe(1);
  });

  it("globex sends acme's key and acme's run id as its keys: each is a free key of its own, acme's run untouched", async () => {
    for (const key of ['pay-1', acmePayment]) {
      const answer = await api('POST', '/runs', TOKENS.globex, { body: agentRun('quick'), key });
      expect(answer.status).toBe(202);
      expect(answer.body['duplicate']).toBe(false);
      expect(answer.body['runId']).not.toBe(acmePayment);
      expect((await untilRun(String(answer.body['runId']), TOKENS.globex, ['completed'])).tenant).toBe(
        'globex',
      );
    }
    expect((await api('GET', `/runs/${acmePayment}`, TOKENS.globex)).status).toBe(404);
    expect((await untilRun(acmePayment, TOKENS.acme, ['completed'])).tenant).toBe('acme');
  });

  it("globex cannot take acme's schedule ticks, nor learn or touch its schedule", async () => {
    const created = await api('POST', '/schedules', TOKENS.acme, {
      body: { id: 'nightly', everyMs: 1000, overlap: 'skip', request: { v: 1, ...agentRun('quick') } },
    });
    expect(created.status).toBe(201);
    const stored = String((created.body['spec'] as { id: string }).id);
    const [next] = created.body['next'] as string[];
    const tick = `sch-${stored}-${Math.floor(Date.parse(next ?? '') / 1000)}`;
    // The next tick's run id, as a key or as the body's runId, and an event trigger's: refused outright.
    for (const attempt of [
      { key: tick, body: agentRun('quick') },
      { body: { ...agentRun('quick'), runId: tick } },
      { key: 'trg-orders-1', body: agentRun('quick') },
    ]) {
      const answer = await api('POST', '/runs', TOKENS.globex, attempt);
      expect([answer.status, answer.body.error?.code]).toEqual([400, 'reserved_run_id']);
    }
    // A schedule of the same id is globex's own; acme's is "not found" to globex, to read, trigger or delete.
    const mine = await api('POST', '/schedules', TOKENS.globex, {
      body: { id: 'nightly', everyMs: 60_000, request: { v: 1, ...agentRun('quick') } },
    });
    expect([mine.status, mine.body['created']]).toEqual([201, true]);
    expect((mine.body['spec'] as { id: string }).id).not.toBe(stored);
    expect((await api('POST', '/schedules/nightly/pause', TOKENS.globex)).status).toBe(200);
    for (const [method, path] of [
      ['GET', `/schedules/${stored}`],
      ['POST', `/schedules/${stored}/trigger`],
      ['POST', `/schedules/${stored}/pause`],
      ['DELETE', `/schedules/${stored}`],
    ] as const)
      expect((await api(method, path, TOKENS.globex)).status, `${method} ${path}`).toBe(404);
    // acme's ticks run as acme's, the one globex aimed at included.
    const runs = await eventually(
      async () => {
        const record = (await api('GET', '/schedules/nightly', TOKENS.acme)).body as {
          history: { runId: string; action: string }[];
        };
        const started = record.history.filter((h) => h.action === 'started').map((h) => h.runId);
        return started.includes(tick) && started.length >= 3 ? started : undefined;
      },
      "acme's schedule to start three ticks, the targeted one among them",
      60_000,
    );
    await api('POST', '/schedules/nightly/pause', TOKENS.acme);
    for (const runId of runs) expect((await untilRun(runId, TOKENS.acme, ['completed'])).tenant).toBe('acme');
  });

  it('charged exactly once in all: only acme asked, the shipped permissions were never violated', () => {
    expect(stack().witness.totals()).toMatchObject({ effects: 1, keys: 1 });
    for (const output of stack().services.outputs()) expect(output).not.toMatch(/Permissions Violation/);
  });
});
