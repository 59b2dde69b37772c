import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ModelLimit } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { createFlowControl, createFlowStore, type FlowAdmission, type FlowControl } from '../src/index';
import { connect, testLogger, type Connections } from './support';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const MODEL = 'openai/gpt-4o-mini';
const conns: Connections[] = [];
/** One clock for every replica, moved by the test: admission is checked without waiting for real minutes. */
let now = 1_000_000;

/** `count` replicas, each with its own NATS connection, sharing `limits` through the KV bucket. */
async function replicas(count: number, limits: ModelLimit[], leaseMs = 60_000): Promise<FlowControl[]> {
  const made: FlowControl[] = [];
  for (let i = 0; i < count; i++) {
    const conn = await connect(infra().nats.url, `flow-${conns.length}`);
    conns.push(conn);
    const store = createFlowStore({ js: conn.js, log: testLogger('flow'), clock: () => now });
    made.push(createFlowControl({ store, limits, clock: () => now, leaseMs }));
  }
  return made;
}

const call = (
  runId: string,
  extra: Partial<{ tenant: string; inputTokens: number; outputTokens: number }> = {},
) => ({
  runId,
  decision: 0,
  tenant: extra.tenant ?? 'a',
  model: MODEL,
  inputTokens: extra.inputTokens ?? 100,
  outputTokens: extra.outputTokens ?? 100,
});

beforeAll(() => {
  now = 1_000_000;
});

afterAll(async () => {
  await Promise.all(conns.map((conn) => conn.close()));
});

describe('model limits shared through NATS KV', () => {
  it('given 3 replicas admitting 90 calls at once under 30 requests/min, 30 go, the rest go in turn as each asks again when told, none before the provider has room', async () => {
    const limit: ModelLimit = { model: `${MODEL}-rpm`, requestsPerMinute: 30, headroomSeconds: 0 };
    const flows = await replicas(3, [limit]);
    const start = now;
    const outcomes = await Promise.all(
      Array.from({ length: 90 }, (_, i) =>
        (flows[i % 3] as FlowControl).admit({ ...call(`run-${i}`), model: limit.model }),
      ),
    );
    expect(outcomes.filter((o) => o.kind === 'go')).toHaveLength(30);
    const waits = outcomes.filter((o): o is Extract<FlowAdmission, { kind: 'wait' }> => o.kind === 'wait');
    expect(waits[0]?.reason).toBe(`capacity of ${limit.model} (requests per minute)`);
    // Each waiting caller asks again when its wait ends (a ticket's holder then goes; a caller in line
    // asks for a ticket), as the planner does when the run's timer fires.
    const went: number[] = Array.from({ length: 30 }, () => start);
    const pending = outcomes.flatMap((o, i) => (o.kind === 'wait' ? [{ i, until: o.until }] : []));
    for (let round = 0; pending.length > 0; round++) {
      expect(round, 'every caller goes within 2,000 rounds').toBeLessThan(2_000);
      pending.sort((x, y) => x.until - y.until || x.i - y.i);
      const next = pending.shift()!;
      now = Math.max(now, next.until);
      const again = await (flows[next.i % 3] as FlowControl).admit({
        ...call(`run-${next.i}`),
        model: limit.model,
      });
      if (again.kind === 'go') went.push(now);
      else pending.push({ i: next.i, until: again.until });
    }
    expect(went).toHaveLength(90);
    // A provider counting the same limit as a bucket (30, refilled continuously) finds room for each call.
    let level = 30;
    let at = start;
    for (const t of went.sort((x, y) => x - y)) {
      level = Math.min(30, level + ((t - at) * 30) / 60_000) - 1;
      at = t;
      expect(level).toBeGreaterThanOrEqual(-1e-9);
    }
    // At the limit's pace: the 60 after the first minute's burst took two minutes, not much more.
    expect(Math.max(...went) - start).toBeLessThanOrEqual(125_000);
  });

  it('given a ticket for later, asking again before it is due waits for the same moment, and at it goes without taking more', async () => {
    const limit: ModelLimit = { model: `${MODEL}-ticket`, requestsPerMinute: 1, headroomSeconds: 0 };
    const [flow] = (await replicas(1, [limit])) as [FlowControl];
    const first = await flow.admit({ ...call('t-1'), model: limit.model });
    expect(first.kind).toBe('go');
    const second = await flow.admit({ ...call('t-2'), model: limit.model });
    if (second.kind !== 'wait') throw new Error('expected a wait');
    expect(second.until).toBe(now + 60_000);
    const again = await flow.admit({ ...call('t-2'), model: limit.model });
    expect(again).toMatchObject({ kind: 'wait', until: second.until });
    now = second.until;
    expect((await flow.admit({ ...call('t-2'), model: limit.model })).kind).toBe('go');
    // The ticket was used: a third caller is a full minute later still.
    const third = await flow.admit({ ...call('t-3'), model: limit.model });
    expect(third).toMatchObject({ kind: 'wait', until: now + 60_000 });
  });

  it('given the worst case admitted and a small usage settled, the tokens not used are available again', async () => {
    const limit: ModelLimit = { model: `${MODEL}-tokens`, outputTokensPerMinute: 1_000, headroomSeconds: 0 };
    const [one, two] = (await replicas(2, [limit])) as [FlowControl, FlowControl];
    const big = await one.admit({ ...call('k-1', { outputTokens: 1_000 }), model: limit.model });
    if (big.kind !== 'go') throw new Error('expected the first call to go');
    await big.settle({ inputTokens: 100, outputTokens: 200 });
    // 800 given back: a call of 500 goes at once, the next of 400 waits.
    expect((await two.admit({ ...call('k-2', { outputTokens: 500 }), model: limit.model })).kind).toBe('go');
    expect((await two.admit({ ...call('k-3', { outputTokens: 400 }), model: limit.model })).kind).toBe(
      'wait',
    );
  });

  it('given 2 concurrent calls allowed across 3 replicas, 2 go; a holder killed mid-call frees its slot when its lease runs out', async () => {
    const limit: ModelLimit = { model: `${MODEL}-slots`, concurrentCalls: 2 };
    const flows = await replicas(3, [limit], 5_000);
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (flows[i % 3] as FlowControl).admit({ ...call(`s-${i}`), model: limit.model }),
      ),
    );
    expect(outcomes.filter((o) => o.kind === 'go')).toHaveLength(2);
    const waiting = outcomes.find((o) => o.kind === 'wait');
    expect(waiting).toMatchObject({ reason: `capacity of ${limit.model} (concurrent calls)` });
    // Nobody settles (both holders were killed): after the lease, the first in line gets a slot.
    now += 5_001;
    // Callers that asked at the same moment are in line by name.
    const line = outcomes
      .map((o, i) => ({ o, holder: `s-${i}` }))
      .filter(({ o }) => o.kind === 'wait')
      .map(({ holder }) => holder)
      .sort((a, b) => (`${a}:0` < `${b}:0` ? -1 : 1));
    const [head, second, third] = line as [string, string, string];
    const flow = flows[0] as FlowControl;
    expect((await flow.admit({ ...call(third), model: limit.model })).kind).toBe('wait');
    expect((await flow.admit({ ...call(head), model: limit.model })).kind).toBe('go');
    expect((await flow.admit({ ...call(second), model: limit.model })).kind).toBe('go');
  });

  it("given a call slower than its slot's lease, the lease is renewed while it is in flight: no other replica takes the slot until it settles", async () => {
    // Real time here: the renewal runs on a timer. A lease of 900 ms, a call held for 2.5 s.
    const limit: ModelLimit = { model: `${MODEL}-slow`, concurrentCalls: 1 };
    const real = async (name: string) => {
      const conn = await connect(infra().nats.url, name);
      conns.push(conn);
      const store = createFlowStore({ js: conn.js, log: testLogger('flow') });
      return createFlowControl({ store, limits: [limit], leaseMs: 900 });
    };
    const [one, two] = [await real('slow-1'), await real('slow-2')];
    const held = await one.admit({ ...call('slow-a'), model: limit.model });
    if (held.kind !== 'go') throw new Error('expected the first call to go');
    const deadline = Date.now() + 2_500;
    while (Date.now() < deadline) {
      const other = await two.admit({ ...call('slow-b'), model: limit.model });
      expect(other.kind, 'a second call while the first is still in flight').toBe('wait');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await held.settle(undefined);
    expect((await two.admit({ ...call('slow-b'), model: limit.model })).kind).toBe('go');
  });

  it('given a call refused a slot again and again, it holds no rate ticket meanwhile: the rate is there for calls that can go', async () => {
    // The rate is shared; each tenant has one concurrent call.
    const limits: ModelLimit[] = [
      { model: `${MODEL}-refund`, requestsPerMinute: 30, headroomSeconds: 0 },
      { model: `${MODEL}-refund`, tenant: '*', concurrentCalls: 1 },
    ];
    const [flow] = (await replicas(1, limits)) as [FlowControl];
    const model = `${MODEL}-refund`;
    const holding = await flow.admit({ ...call('refund-a1'), model });
    if (holding.kind !== 'go') throw new Error('expected the first call to go');
    for (let i = 0; i < 5; i++) {
      const refused = await flow.admit({ ...call('refund-a2'), model });
      expect(refused).toMatchObject({
        kind: 'wait',
        reason: `capacity of ${model} for tenant a (concurrent calls)`,
      });
    }
    // 29 of the 30 units are left (the holder's): tenant b's calls, one at a time, take them all.
    for (let i = 0; i < 29; i++) {
      const went = await flow.admit({ ...call(`refund-b${i}`, { tenant: 'b' }), model });
      expect(went.kind, `call ${i} of tenant b`).toBe('go');
      if (went.kind === 'go') await went.settle(undefined);
    }
    expect((await flow.admit({ ...call('refund-b29', { tenant: 'b' }), model })).kind).toBe('wait');
    await holding.settle(undefined);
  });

  it('given a 429 with Retry-After, the next call goes no sooner than that', async () => {
    const limit: ModelLimit = { model: `${MODEL}-429`, requestsPerMinute: 600 };
    const [flow] = (await replicas(1, [limit])) as [FlowControl];
    await flow.throttle(limit.model, 10_000);
    const throttledAt = now;
    // The caller asks again whenever its wait ends (in line first, then for its ticket): it goes no sooner.
    let next = await flow.admit({ ...call('r-1'), model: limit.model });
    expect(next.kind).toBe('wait');
    for (let round = 0; next.kind === 'wait'; round++) {
      expect(round).toBeLessThan(10);
      now = next.until;
      next = await flow.admit({ ...call('r-1'), model: limit.model });
    }
    expect(now).toBeGreaterThanOrEqual(throttledAt + 10_000);
  });

  it('given a concurrency key of limit 1, a second run waits until the first leaves, and a per-tenant limit counts each tenant apart', async () => {
    const limit: ModelLimit = { model: `${MODEL}-tenant`, tenant: '*', concurrentCalls: 1 };
    const [flow] = (await replicas(1, [limit])) as [FlowControl];
    expect(await flow.enterKey('customer:42', 1, 'run-a')).toEqual({ kind: 'go' });
    expect((await flow.enterKey('customer:42', 1, 'run-b')).kind).toBe('wait');
    expect(await flow.enterKey('customer:42', 1, 'run-a')).toEqual({ kind: 'go' });
    await flow.leaveKey('customer:42', 1, 'run-a');
    expect(await flow.enterKey('customer:42', 1, 'run-b')).toEqual({ kind: 'go' });
    const a = await flow.admit({ ...call('ta-1', { tenant: 'a' }), model: limit.model });
    const b = await flow.admit({ ...call('tb-1', { tenant: 'b' }), model: limit.model });
    expect([a.kind, b.kind]).toEqual(['go', 'go']);
    const a2 = await flow.admit({ ...call('ta-2', { tenant: 'a' }), model: limit.model });
    expect(a2).toMatchObject({
      kind: 'wait',
      reason: `capacity of ${limit.model} for tenant a (concurrent calls)`,
    });
  });

  it("given two calls of one code agent's step, each keeps its own ticket, and a freed slot wakes the run of a step's later call", async () => {
    const rate: ModelLimit = { model: `${MODEL}-steps`, requestsPerMinute: 1, headroomSeconds: 0 };
    const [flow] = (await replicas(1, [rate])) as [FlowControl];
    const step = { ...call('step-1'), model: rate.model };
    expect((await flow.admit(step)).kind).toBe('go');
    // The step's second call waits for its ticket.
    const second = await flow.admit({ ...step, call: 1 });
    if (second.kind !== 'wait') throw new Error('expected a wait');
    // Decided again from the start (its first answer was not recorded), the first call asks anew: the second
    // call's ticket is not its own, so it waits a minute more, and the second call's ticket stays for it.
    now = second.until;
    expect(await flow.admit(step)).toMatchObject({ kind: 'wait', until: now + 60_000 });
    expect((await flow.admit({ ...step, call: 1 })).kind).toBe('go');

    const slot: ModelLimit = { model: `${MODEL}-step-slot`, concurrentCalls: 1 };
    const conn = await connect(infra().nats.url, `flow-${conns.length}`);
    conns.push(conn);
    const woken: string[] = [];
    const slotted = createFlowControl({
      store: createFlowStore({ js: conn.js, log: testLogger('flow'), clock: () => now }),
      limits: [slot],
      clock: () => now,
      wake: (runId) => Promise.resolve(void woken.push(runId)),
    });
    const held = await slotted.admit({ ...call('slot-a'), model: slot.model, call: 2 });
    if (held.kind !== 'go') throw new Error('expected the first call to go');
    expect((await slotted.admit({ ...call('slot-b'), model: slot.model, call: 1 })).kind).toBe('wait');
    await held.settle({ inputTokens: 1, outputTokens: 1 });
    expect(woken).toEqual(['slot-b']);
  });
});
