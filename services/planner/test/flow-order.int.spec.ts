// Who goes next when a concurrent-call slot or a concurrency key comes free, across replicas sharing the
// NATS KV bucket: priority first, then tenants' shares, then the order asked; the freed slot wakes that run.
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { ModelLimit } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { createFlowControl, createFlowStore, type FlowControl } from '../src/index';
import { connect, testLogger, type Connections } from './support';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const MODEL = 'openai/gpt-4o-mini';
const conns: Connections[] = [];
/** One clock for every replica, moved by the test. */
let now = 5_000_000;
/** Runs woken by a freed slot, in the order the replicas woke them. */
const woken: string[] = [];

async function replicas(count: number, limits: ModelLimit[]): Promise<FlowControl[]> {
  const made: FlowControl[] = [];
  for (let i = 0; i < count; i++) {
    const conn = await connect(infra().nats.url, `order-${conns.length}`);
    conns.push(conn);
    const store = createFlowStore({ js: conn.js, log: testLogger('flow'), clock: () => now });
    const wake = (runId: string) => {
      woken.push(runId);
      return Promise.resolve();
    };
    made.push(createFlowControl({ store, limits, clock: () => now, leaseMs: 60_000, wake }));
  }
  return made;
}

const call = (runId: string, model: string, tenant = 'a', priority = 0) => ({
  runId,
  decision: 0,
  tenant,
  priority,
  model,
  inputTokens: 10,
  outputTokens: 10,
});

afterAll(async () => {
  await Promise.all(conns.map((conn) => conn.close()));
});

describe('slots and keys go by priority, then tenants’ shares', () => {
  it('given a concurrent-call slot held and a caller of priority 0 waiting, a caller of priority 10 asking later is woken first and goes; the other still waits', async () => {
    const model = `${MODEL}-prio`;
    const [one, two] = (await replicas(2, [{ model, concurrentCalls: 1 }])) as [FlowControl, FlowControl];
    const holding = await one.admit(call('p-holder', model));
    if (holding.kind !== 'go') throw new Error('expected the first call to go');
    now += 10;
    expect((await two.admit(call('p-low', model, 'a', 0))).kind).toBe('wait');
    now += 10;
    expect((await one.admit(call('p-high', model, 'b', 10))).kind).toBe('wait');
    woken.length = 0;
    now += 10;
    await holding.settle(undefined);
    expect(woken).toEqual(['p-high']);
    // The low one asks first (its timer fired), and is refused: the slot is the higher priority's.
    expect((await two.admit(call('p-low', model, 'a', 0))).kind).toBe('wait');
    expect((await one.admit(call('p-high', model, 'b', 10))).kind).toBe('go');
  });

  it('given a concurrency key held and runs of priority 0 waiting, a run of priority 5 is woken first when the key is left', async () => {
    const [one, two] = (await replicas(2, [])) as [FlowControl, FlowControl];
    expect(await one.enterKey('export', 1, 'k-holder', { tenant: 'a' })).toEqual({ kind: 'go' });
    for (const runId of ['k-low-1', 'k-low-2']) {
      now += 10;
      expect((await two.enterKey('export', 1, runId, { tenant: 'a' })).kind).toBe('wait');
    }
    now += 10;
    expect((await one.enterKey('export', 1, 'k-urgent', { tenant: 'a', priority: 5 })).kind).toBe('wait');
    woken.length = 0;
    await two.leaveKey('export', 1, 'k-holder');
    expect(woken).toEqual(['k-urgent']);
    expect((await two.enterKey('export', 1, 'k-low-1', { tenant: 'a' })).kind).toBe('wait');
    expect(await one.enterKey('export', 1, 'k-urgent', { tenant: 'a', priority: 5 })).toEqual({
      kind: 'go',
    });
  });

  it('given a key of limit 1 with 30 runs of tenant a waiting and then 3 of tenant b, b’s runs go within their share, not after a’s backlog', async () => {
    const flows = await replicas(3, []);
    const flow = (i: number) => flows[i % 3] as FlowControl;
    expect(await flow(0).enterKey('shared', 1, 'f-first', { tenant: 'a' })).toEqual({ kind: 'go' });
    const waiting = [
      ...Array.from({ length: 30 }, (_, i) => ({ runId: `f-a${i}`, tenant: 'a' })),
      ...Array.from({ length: 3 }, (_, i) => ({ runId: `f-b${i}`, tenant: 'b' })),
    ];
    for (const [i, run] of waiting.entries()) {
      now += 1;
      expect((await flow(i).enterKey('shared', 1, run.runId, { tenant: run.tenant })).kind).toBe('wait');
    }
    // Each run that goes leaves at once, and the run woken goes next, as planners do.
    const tenantOf = new Map(waiting.map((run) => [run.runId, run.tenant]));
    const order: string[] = [];
    let holder = 'f-first';
    for (let turn = 0; turn < waiting.length; turn++) {
      woken.length = 0;
      now += 10;
      await flow(turn).leaveKey('shared', 1, holder);
      expect(woken).toHaveLength(1);
      holder = woken[0] as string;
      const entered = await flow(turn + 1).enterKey('shared', 1, holder, { tenant: tenantOf.get(holder) });
      expect(entered, `${holder} woken for the key`).toEqual({ kind: 'go' });
      order.push(holder);
    }
    expect(new Set(order).size).toBe(33);
    // Equal shares: b's three runs go within the first six, alternating with a's, not after 30 of a's.
    const bAt = order.flatMap((runId, i) => (runId.startsWith('f-b') ? [i] : []));
    expect(bAt).toEqual([0, 2, 4]);
    expect(order.filter((runId) => runId.startsWith('f-a'))).toEqual(
      Array.from({ length: 30 }, (_, i) => `f-a${i}`),
    );
  });

  it('given concurrent-call slots with tenant a weighted 3 and both tenants backlogged, a gets three slots for each of b’s', async () => {
    const model = `${MODEL}-share`;
    const limit: ModelLimit = { model, concurrentCalls: 1, weights: { a: 3 } };
    const [one, two] = (await replicas(2, [limit])) as [FlowControl, FlowControl];
    let holding = await one.admit(call('w-first', model, 'c'));
    if (holding.kind !== 'go') throw new Error('expected the first call to go');
    const waiting = [
      ...Array.from({ length: 12 }, (_, i) => ({ runId: `w-a${i}`, tenant: 'a' })),
      ...Array.from({ length: 4 }, (_, i) => ({ runId: `w-b${i}`, tenant: 'b' })),
    ];
    for (const run of waiting) {
      now += 1;
      expect((await two.admit(call(run.runId, model, run.tenant))).kind).toBe('wait');
    }
    const tenantOf = new Map(waiting.map((run) => [run.runId, run.tenant]));
    const order: string[] = [];
    for (let turn = 0; turn < 8; turn++) {
      woken.length = 0;
      now += 10;
      await holding.settle(undefined);
      expect(woken).toHaveLength(1);
      const next = woken[0] as string;
      const admitted = await (turn % 2 ? one : two).admit(call(next, model, tenantOf.get(next)));
      if (admitted.kind !== 'go') throw new Error(`${next} was woken for the slot but refused it`);
      holding = admitted;
      order.push(next);
    }
    await holding.settle(undefined);
    expect(order.filter((runId) => runId.startsWith('w-a'))).toHaveLength(6);
    expect(order.filter((runId) => runId.startsWith('w-b'))).toHaveLength(2);
  });
});
