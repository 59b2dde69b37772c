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
  it('given 3 replicas admitting 90 calls at once under 30 requests/min, 30 go and the rest get tickets 2 s apart, none before the provider has room', async () => {
    const limit: ModelLimit = { model: `${MODEL}-rpm`, requestsPerMinute: 30, headroomSeconds: 0 };
    const flows = await replicas(3, [limit]);
    const outcomes = await Promise.all(
      Array.from({ length: 90 }, (_, i) =>
        (flows[i % 3] as FlowControl).admit({ ...call(`run-${i}`), model: limit.model }),
      ),
    );
    const goes = outcomes.filter((o) => o.kind === 'go');
    expect(goes).toHaveLength(30);
    const times = outcomes.map((o) => (o.kind === 'go' ? now : o.until)).sort((a, b) => a - b);
    // A provider counting the same limit as a bucket (30, refilled continuously) finds room for each call.
    let level = 30;
    let at = now;
    for (const t of times) {
      level = Math.min(30, level + ((t - at) * 30) / 60_000) - 1;
      at = t;
      expect(level).toBeGreaterThanOrEqual(-1e-9);
    }
    const waits = outcomes.filter((o): o is Extract<FlowAdmission, { kind: 'wait' }> => o.kind === 'wait');
    expect(new Set(waits.map((w) => w.until)).size).toBe(60);
    expect(waits[0]?.reason).toBe(`capacity of ${limit.model} (requests per minute)`);
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

  it('given a 429 with Retry-After, the next call waits at least that long', async () => {
    const limit: ModelLimit = { model: `${MODEL}-429`, requestsPerMinute: 600 };
    const [flow] = (await replicas(1, [limit])) as [FlowControl];
    await flow.throttle(limit.model, 10_000);
    const next = await flow.admit({ ...call('r-1'), model: limit.model });
    if (next.kind !== 'wait') throw new Error('expected a wait after the 429');
    expect(next.until).toBeGreaterThanOrEqual(now + 10_000);
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
});
