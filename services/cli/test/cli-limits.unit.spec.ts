// `dura limits` against a stand-in projector that answers GET /flow/limits with a view shaped by the same
// code the projector uses (limitRows over limit records as planners write them): the table (the example of
// docs/flow-control.md "Seeing limits"), --json, a warning, and the exit codes of failures.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowLimitsResponse } from '@dura/contracts';
import {
  emptyLimitRecord,
  limitRows,
  takeSlot,
  takeTicket,
  throttled,
  type LimitRecord,
  type ModelLimit,
} from '@dura/core';
import { runCli } from '../src/cli';
import { EXIT } from '../src/command';

const now = Date.parse('2026-11-29T10:15:00.000Z');
const mini: ModelLimit = {
  model: 'openai/gpt-4o-mini',
  requestsPerMinute: 60,
  inputTokensPerMinute: 200_000,
  outputTokensPerMinute: 20_000,
  concurrentCalls: 10,
};
const perTenant: ModelLimit = { model: 'openai/gpt-4o-mini', tenant: '*', requestsPerMinute: 20 };
const call = (i: number, tenant: string) => ({
  holder: `run_${i}:0`,
  inputTokens: 2_000,
  outputTokens: 256,
  tenant,
});

/** The view of the docs' example: calls admitted, slots held, callers in line, a 429, a concurrency key. */
function exampleView(): FlowLimitsResponse {
  let shared: LimitRecord = emptyLimitRecord(now);
  for (let i = 0; i < 40; i++)
    shared = takeTicket(shared, mini, call(i, i % 2 ? 'acme' : 'globex'), now).record;
  for (let i = 0; i < 3; i++) shared = takeSlot(shared, mini, `run_${i}:0`, 300_000, now).record;
  shared = throttled(shared, mini, 2_000, now);
  shared = {
    ...shared,
    line: {
      'run_50:0': { tenant: 'acme', priority: 0, since: now, until: now + 60_000 },
      'run_51:0': { tenant: 'acme', priority: 0, since: now, until: now + 60_000 },
      'run_52:0': { tenant: 'globex', priority: 0, since: now, until: now + 60_000 },
    },
  };
  let acme: LimitRecord = emptyLimitRecord(now);
  for (let i = 0; i < 17; i++) acme = takeTicket(acme, perTenant, call(i, 'acme'), now).record;
  const key = {
    ...takeSlot(emptyLimitRecord(now), { model: 'k', concurrentCalls: 1 }, 'run_7', 600_000, now).record,
    keyLimit: 1,
  };
  const queued = takeSlot(key, { model: 'k', concurrentCalls: 1 }, 'run_8', 600_000, now).record;
  return limitRows(
    [
      { key: 'openai/gpt-4o-mini', record: shared },
      { key: 'openai/gpt-4o-mini@acme', record: acme },
      { key: 'key:customer:42', record: queued },
    ],
    [
      { limit: mini, at: now },
      { limit: perTenant, at: now },
    ],
    now,
  );
}

let server: Server;
let apiUrl: string;
let answer: { status: number; body: unknown } = { status: 200, body: exampleView() };

beforeAll(async () => {
  server = createServer((req, res) => {
    const found = req.url === '/flow/limits';
    res.writeHead(found ? answer.status : 404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        found ? answer.body : { error: { code: 'not_found', message: `no route for ${req.url}` } },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

async function cli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: {},
    streams: { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/** The ```text block under "## Seeing limits" of docs/flow-control.md that follows `dura limits`. */
function docsExample(): string {
  const doc = readFileSync(new URL('../../../docs/flow-control.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Seeing limits'));
  const block = /```text\n\$ dura limits\n([\s\S]*?)```/.exec(section)?.[1];
  expect(block, 'docs/flow-control.md has the dura limits example').toBeDefined();
  return block ?? '';
}

describe('dura limits', () => {
  it('prints the table of the docs example: declared, available now, in use, waiting, throttled', async () => {
    answer = { status: 200, body: exampleView() };
    const { code, stdout, stderr } = await cli(['--api', apiUrl, 'limits']);
    expect(stderr).toBe('');
    expect(code).toBe(EXIT.ok);
    expect(stdout).toBe(docsExample());
  });

  it('--json prints the view as the API answers it', async () => {
    const { code, stdout } = await cli(['--api', apiUrl, '--json', 'limits']);
    expect(code).toBe(EXIT.ok);
    expect(JSON.parse(stdout)).toEqual(exampleView());
  });

  it('names replicas declaring different figures on stderr, beside the table', async () => {
    answer = {
      status: 200,
      body: { ...exampleView(), warnings: ['replicas declare different limits for x'] },
    };
    const { code, stdout, stderr } = await cli(['--api', apiUrl, 'limits']);
    expect(code).toBe(EXIT.ok);
    expect(stdout).toMatch(/^LIMIT +DECLARED/);
    expect(stderr).toBe('dura: warning: replicas declare different limits for x\n');
  });

  it('says so when nothing is declared', async () => {
    answer = { status: 200, body: { at: new Date(now).toISOString(), limits: [], warnings: [] } };
    const { code, stderr } = await cli(['--api', apiUrl, 'limits']);
    expect(code).toBe(EXIT.ok);
    expect(stderr).toMatch(/no limits: no planner declares DURA_MODEL_LIMITS/);
  });

  it('exits 2 on an argument, 4 when the API is unreachable, 5 when it refuses', async () => {
    expect((await cli(['--api', apiUrl, 'limits', 'extra'])).code).toBe(EXIT.usage);
    expect((await cli(['--api', 'http://127.0.0.1:1', 'limits'])).code).toBe(EXIT.unreachable);
    answer = { status: 403, body: { error: { code: 'forbidden', message: 'scope read required' } } };
    const refused = await cli(['--api', apiUrl, 'limits']);
    expect(refused.code).toBe(EXIT.error);
    expect(refused.stderr).toMatch(/scope read required/);
  });

  it('--help says what each column means', async () => {
    const { code, stdout } = await cli(['limits', '--help']);
    expect(code).toBe(EXIT.ok);
    expect(stdout).toMatch(/available now/);
    expect(stdout).toMatch(/dura limits --json/);
  });
});
