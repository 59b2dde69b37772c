// Debounce through real processes, as docs/triggers.md and docs/flow-control.md show it: the trigger of the
// triggers page takes three events of one customer, and the planner that ends the window is SIGKILLed (the
// failpoint planner.gate-after-close) after writing that decision and before publishing the run; another
// planner, started after it died, publishes it. Then the request of the flow-control page, sent three times
// to POST /runs, starts one run with the last input.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { createDuraClient, type DuraClient } from '@dura/client';
import { STREAMS } from '@dura/contracts';
import { repoRoot, useTestInfra, type ManagedProcess } from '@dura/testing';
import { eventually, openSystem, startService, type SystemHandles } from './system';

vi.setConfig({ testTimeout: 120_000 });

const infra = useTestInfra();
let system: SystemHandles;
let client: DuraClient;
const processes: ManagedProcess[] = [];

const jsonBlocks = (page: string) =>
  [...readFileSync(join(repoRoot(), 'docs', page), 'utf8').matchAll(/```json\n([\s\S]*?)```/g)].map(
    (m) => m[1] ?? '',
  );
const documented = (page: string, field: string): Record<string, unknown> =>
  JSON.parse(jsonBlocks(page).find((b) => b.includes(`"${field}"`)) ?? 'null') as Record<string, unknown>;

async function runsOf(prefix: string): Promise<string[]> {
  const info = await system.jsm.streams.info(STREAMS.runs, { subjects_filter: 'dura.run.*' });
  return Object.keys(info.state.subjects ?? {})
    .map((s) => s.slice('dura.run.'.length))
    .filter((runId) => runId.startsWith(prefix));
}

async function completedInput(runId: string): Promise<unknown> {
  const events = await eventually(
    async () => {
      const found = await client.readEvents(runId);
      return found.at(-1)?.type === 'run_completed' ? found : undefined;
    },
    `run ${runId} completed`,
    60_000,
  );
  const first = events[0];
  return first?.type === 'run_requested' ? first.data.request.input : undefined;
}

beforeAll(async () => {
  system = await openSystem(infra().nats.url, infra().db.url);
  client = createDuraClient(system);
  processes.push(
    ...(await Promise.all([
      startService('tool-gateway', system.env),
      startService('projector', system.env),
      startService('planner', { ...system.env, DURA_FAILPOINT: 'planner.gate-after-close:1' }),
    ])),
  );
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((p) => p.kill('SIGTERM')));
  await system?.close();
});

describe('debounce across a planner killed mid-window', () => {
  it("the triggers page's trigger: three events, one run with the third, published by the next planner", async () => {
    const spec = documented('triggers.md', 'debounce');
    expect(spec).toMatchObject({ id: 'customer_sync', debounce: { windowMs: 2000 } });
    await client.eventTriggers.create(spec);
    const doomed = processes[2]!;
    await doomed.waitForOutput(/event trigger bound.*customer_sync/, 30_000);
    for (const n of [1, 2, 3]) {
      const h = natsHeaders();
      h.set('Nats-Msg-Id', `customer-7-change-${n}`);
      await system.js.publish('dura.event.customers.updated', JSON.stringify({ customer: 7, n }), {
        headers: h,
      });
    }
    // The only planner ends the window, and dies between its decision and the publish.
    await doomed.waitForOutput(/failpoint planner\.gate-after-close reached/, 30_000);
    await doomed.exited;
    expect(await runsOf('trg-customer_sync-')).toEqual([]);
    processes.push(await startService('planner', system.env));
    const [runId] = await eventually(
      async () => {
        const found = await runsOf('trg-customer_sync-');
        return found.length > 0 ? found : undefined;
      },
      'the run of the window, published by the planner started after the kill',
      45_000,
    );
    expect(runId).toMatch(/^trg-customer_sync-w[0-9a-f]{12}-[0-9a-z]+$/);
    expect(await completedInput(runId!)).toEqual({ customer: 7, n: 3 });
    expect(await runsOf('trg-customer_sync-')).toHaveLength(1);
  });

  it("the flow-control page's request, sent three times to POST /runs: one run, with the third's input", async () => {
    const body = documented('flow-control.md', 'debounce');
    const answers = [];
    for (const change of ['address', 'phone', 'email']) {
      const response = await fetch(`${system.apiUrl}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, input: { customer: 42, change } }),
      });
      answers.push({ status: response.status, body: (await response.json()) as Record<string, unknown> });
    }
    expect(answers.map((a) => [a.status, a.body['outcome']])).toEqual([
      [202, 'debounced'],
      [202, 'debounced'],
      [202, 'debounced'],
    ]);
    const runId = answers[0]!.body['runId'] as string;
    expect(answers.every((a) => a.body['runId'] === runId)).toBe(true);
    expect(await completedInput(runId)).toEqual({ customer: 42, change: 'email' });
  });
});
