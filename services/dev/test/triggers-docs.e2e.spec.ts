// docs/triggers.md, run as written: its `dura schedule` lines through the CLI, its HTTP request against the
// projector, its trigger spec and `nats pub` line against the planner. The runs they start complete.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { createDuraClient, type DuraClient } from '@dura/client';
import { repoRoot, useTestInfra, type ManagedProcess } from '@dura/testing';
import { dura, eventually, openSystem, startService, type SystemHandles } from './system';

const infra = useTestInfra();
let system: SystemHandles;
let client: DuraClient;
const processes: ManagedProcess[] = [];
const doc = readFileSync(join(repoRoot(), 'docs/triggers.md'), 'utf8');

/** The fenced blocks of the page in a language, in order. */
function blocks(lang: string): string[] {
  return [...doc.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1] ?? '');
}

/** A shell line's words (double and single quotes group). */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

async function completed(runId: string) {
  return eventually(
    async () => {
      const events = await client.readEvents(runId);
      return events.at(-1)?.type === 'run_completed' ? events : undefined;
    },
    `run ${runId} completed`,
    60_000,
  );
}

beforeAll(async () => {
  system = await openSystem(infra().nats.url, infra().db.url);
  client = createDuraClient(system);
  processes.push(
    await startService('tool-gateway', system.env),
    await startService('projector', system.env),
    await startService('planner', system.env),
  );
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((p) => p.kill('SIGTERM')));
  await system?.close();
});

/** The request of an `http` block (without its Authorization header) sent to the projector. */
function send(http: string): Promise<Response> {
  const [head = '', body = ''] = http.split('\n\n');
  const [requestLine = '', ...headerLines] = head.split('\n');
  const [method, path] = requestLine.split(' ');
  const headers = Object.fromEntries(
    headerLines
      .map((l) => l.split(': '))
      .filter(([name]) => name !== 'Authorization')
      .map(([name = '', value = '']) => [name.toLowerCase(), value]),
  );
  return fetch(`${system.apiUrl}${path}`, { method, headers, body: body.trim() });
}

describe('docs/triggers.md', () => {
  it('POST /runs: the request shown answers the JSON shown, once, and its run completes', async () => {
    const http = blocks('http')[0] ?? '';
    const first = await send(http);
    expect(first.status).toBe(202);
    const expected: unknown = JSON.parse(blocks('json')[0] ?? '');
    expect(await first.json()).toEqual(expected);
    const again = await send(http);
    expect(((await again.json()) as { duplicate: boolean }).duplicate).toBe(true);
    await completed('report-2026-11-27');
  });

  it('the dura schedule lines run as shown, and a triggered tick starts its run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dura-triggers-doc-'));
    const requestFile = join(dir, 'docs-report.json');
    writeFileSync(
      requestFile,
      JSON.stringify({
        v: 1,
        agent: { kind: 'scripted', steps: [{ tool: 'echo', args: { report: 'nightly' } }] },
      }),
    );
    const lines = (blocks('sh')[0] ?? '').split('\n').filter((l) => l.startsWith('dura schedule'));
    expect(lines.length).toBeGreaterThanOrEqual(8);
    for (const line of lines) {
      const args = words(line)
        .slice(1)
        .map((w) => (w === 'docs-report.json' ? requestFile : w));
      const result = await dura({ system }, args);
      expect(result.code, `${line}\n${result.output}`).toBe(0);
      if (line.includes('get nightly_report'))
        expect(result.output).toMatch(/cron 30 2 \* \* \* Europe\/Paris/);
      if (line.includes('schedule ls')) expect(result.output).toMatch(/heartbeat[\s\S]*nightly_report/);
    }
    const events = await completed('sch-nightly_report-mmanual1');
    const requested = events.find((e) => e.type === 'run_requested');
    if (requested?.type === 'run_requested') expect(requested.data.request.tenant).toBe('acme');
    await expect(client.schedules.get('heartbeat')).rejects.toThrow(/no schedule "heartbeat"/);
  });

  it('the event trigger shown turns the message published with nats pub into its run', async () => {
    const spec: unknown = JSON.parse(blocks('json').find((b) => b.includes('"subject"')) ?? '');
    await client.eventTriggers.create(spec);
    await processes[2]?.waitForOutput(/event trigger bound.*orders/, 30_000);
    const pub = (blocks('sh')[1] ?? '').split('\n').find((l) => l.startsWith('nats pub')) ?? '';
    const [, , subject = '', payload = '', , header = ''] = words(pub);
    const [name = '', value = ''] = header.split(':');
    const h = natsHeaders();
    h.set(name, value);
    await system.js.publish(subject, payload, { headers: h });
    const events = await completed('trg-orders-order-42');
    const call = events.find((e) => e.type === 'tool_call_requested');
    if (call?.type === 'tool_call_requested') expect(call.data.args).toEqual({ order: 42 });
  });

  it('POST /triggers and POST /events as shown: the event starts the run named, with the payload as input', async () => {
    const [, createTrigger = '', sendEvent = ''] = blocks('http');
    const created = await send(createTrigger);
    expect(created.status, await created.clone().text()).toBe(201);
    const sent = await send(sendEvent);
    expect(sent.status).toBe(202);
    const shown = JSON.parse(blocks('json').find((b) => b.includes('"seq"')) ?? '') as Record<
      string,
      unknown
    >;
    expect(await sent.json()).toEqual({ ...shown, seq: expect.any(Number) });
    const events = await completed('trg-signups-signup-ada');
    const call = events.find((e) => e.type === 'tool_call_requested');
    if (call?.type === 'tool_call_requested') expect(call.data.args).toEqual({ user: 'ada' });
    expect((await fetch(`${system.apiUrl}/triggers/signups`, { method: 'DELETE' })).status).toBe(200);
  });
});
