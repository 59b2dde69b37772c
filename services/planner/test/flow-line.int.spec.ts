// A rate's line through NATS KV: callers sleep until their turn, and are woken when the line moves faster.
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { ModelLimit } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { createFlowControl, createFlowStore, type FlowAdmission, type FlowControl } from '../src/index';
import { connect, testLogger, type Connections } from './support';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const MODEL = 'openai/gpt-4o-mini';
const conns: Connections[] = [];
/** One clock for every replica, moved by the test. */
let now = 5_000_000;

/** A replica sharing `limits` through the KV bucket; the runs it wakes are pushed to `woken`. */
async function replica(limits: ModelLimit[], woken: string[]): Promise<FlowControl> {
  const conn = await connect(infra().nats.url, `line-${conns.length}`);
  conns.push(conn);
  const store = createFlowStore({ js: conn.js, log: testLogger('flow'), clock: () => now });
  return createFlowControl({
    store,
    limits,
    clock: () => now,
    wake: (runId) => {
      woken.push(runId);
      return Promise.resolve();
    },
  });
}

const call = (runId: string, model: string, outputTokens = 100) => ({
  runId,
  decision: 0,
  tenant: 'a',
  model,
  inputTokens: 10,
  outputTokens,
});

afterAll(async () => {
  await Promise.all(conns.map((conn) => conn.close()));
});

type Wait = Extract<FlowAdmission, { kind: 'wait' }>;

describe("a rate's line shared through NATS KV", () => {
  it('given callers ahead that go sooner than told (they gave their tokens back), a caller far back in line is woken and goes long before it was told', async () => {
    const model = `${MODEL}-early`;
    const woken: string[] = [];
    const flow = await replica([{ model, outputTokensPerMinute: 600, headroomSeconds: 0 }], woken);
    const start = now;
    const runs = Array.from({ length: 30 }, (_, i) => `early-${String(i).padStart(2, '0')}`);
    const first = new Map<string, FlowAdmission>();
    for (const runId of runs) first.set(runId, await flow.admit(call(runId, model)));
    const going = runs.filter((r) => first.get(r)?.kind === 'go');
    expect(going).toHaveLength(6);
    const last = first.get('early-29') as Wait;
    // Told to wait its turn: 24 callers ahead at one call's worth (100 tokens) each 10 s.
    expect(last.until - start).toBeGreaterThan(150_000);
    expect(woken).toEqual([]);

    // Each call that went used 1 token of the 100 it was admitted on, and gives 99 back: the line moves much
    // faster than it was told. Each waiting caller asks again when its wait ends, or at once when woken (as a
    // run's timer or a wake does).
    const went = new Map<string, number>();
    const pending = runs.flatMap((runId) => {
      const admission = first.get(runId) as FlowAdmission;
      return admission.kind === 'wait' ? [{ runId, until: admission.until }] : [];
    });
    for (const runId of going) {
      went.set(runId, now);
      const admission = first.get(runId) as Extract<FlowAdmission, { kind: 'go' }>;
      await admission.settle({ inputTokens: 10, outputTokens: 1 });
    }
    for (let round = 0; pending.length > 0; round++) {
      expect(round, 'every caller goes within 500 asks').toBeLessThan(500);
      for (const runId of woken.splice(0)) {
        const waiting = pending.find((p) => p.runId === runId);
        if (waiting) waiting.until = Math.min(waiting.until, now);
      }
      pending.sort((x, y) => x.until - y.until || (x.runId < y.runId ? -1 : 1));
      const next = pending.shift()!;
      now = Math.max(now, next.until);
      const again = await flow.admit(call(next.runId, model));
      if (again.kind === 'wait') pending.push({ runId: next.runId, until: again.until });
      else {
        went.set(next.runId, now);
        await again.settle({ inputTokens: 10, outputTokens: 1 });
      }
    }
    // The last caller went in less than a third of the time it was told, woken when its turn came.
    expect((went.get('early-29') as number) - start).toBeLessThan((last.until - start) / 3);
  });

  it('given 120 callers under 1 request a minute, each sleeps until its turn: over 30 minutes they ask again about once a minute between them, not every 30 s each', async () => {
    const model = `${MODEL}-long`;
    const woken: string[] = [];
    const flow = await replica([{ model, requestsPerMinute: 1 }], woken);
    const start = now;
    const pending: { runId: string; until: number }[] = [];
    for (let i = 0; i < 120; i++) {
      const runId = `long-${String(i).padStart(3, '0')}`;
      const admission = await flow.admit(call(runId, model));
      if (admission.kind === 'go') continue;
      pending.push({ runId, until: admission.until });
    }
    // Told their turns a minute apart, the last about two hours away.
    const untils = pending.map((p) => p.until).sort((a, b) => a - b);
    expect(untils.filter((until) => until <= start + 60_000).length).toBeLessThanOrEqual(2);
    expect((untils.at(-1) as number) - start).toBeGreaterThan(100 * 60_000);
    // 30 minutes go by: each caller asks again when its wait ends (or when woken), as a run's timer fires.
    let asked = 0;
    let went = 0;
    for (;;) {
      pending.sort((x, y) => x.until - y.until);
      const next = pending[0];
      if (!next || next.until > start + 30 * 60_000) break;
      pending.shift();
      now = Math.max(now, next.until);
      asked += 1;
      const again = await flow.admit(call(next.runId, model));
      if (again.kind === 'go') {
        went += 1;
        await again.settle(undefined);
      } else pending.push({ runId: next.runId, until: again.until });
    }
    // About one call a minute went, and the callers asked again about as often: not 120 every 30 s (7,200).
    expect(went).toBeGreaterThanOrEqual(25);
    expect(went).toBeLessThanOrEqual(35);
    expect(asked).toBeLessThan(3 * went);
    expect(woken).toEqual([]);
  });

  it('given a run that ends while its call waits in line (cancelled), its call leaves the line and the next caller is woken to be told an earlier turn', async () => {
    const model = `${MODEL}-leave`;
    const woken: string[] = [];
    const flow = await replica([{ model, requestsPerMinute: 1, headroomSeconds: 0 }], woken);
    const told = new Map<string, number>();
    for (let i = 0; i < 10; i++) {
      const runId = `leave-${i}`;
      const admission = await flow.admit(call(runId, model));
      if (admission.kind === 'wait') told.set(runId, admission.until);
    }
    // leave-0 went, the next four hold tickets, leave-5 is first in line. The last one leaving moves nobody.
    await flow.leaveLines({ runId: 'leave-9', decision: 0, tenant: 'a' });
    expect(woken).toEqual([]);
    await flow.leaveLines({ runId: 'leave-5', decision: 0, tenant: 'a' });
    expect(woken).toEqual(['leave-6']);
    const again = (await flow.admit(call('leave-6', model))) as Wait;
    expect(again.kind).toBe('wait');
    expect(again.until).toBeLessThan((told.get('leave-6') as number) - 50_000);
    // Leaving again finds nothing to leave, and wakes nobody.
    await flow.leaveLines({ runId: 'leave-5', decision: 0, tenant: 'a' });
    expect(woken).toEqual(['leave-6']);
  });
});
