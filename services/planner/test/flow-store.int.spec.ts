// A limit's record in NATS KV: written compact, and a record written before the compact form still reads, and
// admission goes on from it.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { decodeLimitRecord, MAX_LINE, takeTicket, type LimitRecord, type ModelLimit } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { createFlowStore, encoded, openFlowBucket } from '../src/flow-store';
import { connect, testLogger, type Connections } from './support';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const conns: Connections[] = [];
const NOW = 1_764_443_794_123;

afterAll(async () => {
  await Promise.all(conns.map((conn) => conn.close()));
});

async function open() {
  const conn = await connect(infra().nats.url, `flow-store-${conns.length}`);
  conns.push(conn);
  const kv = await openFlowBucket(conn.js);
  return { kv, store: createFlowStore({ js: conn.js, log: testLogger('flow'), clock: () => NOW }) };
}

const call = (holder: string) => ({ holder, inputTokens: 10, outputTokens: 2, tenant: 'default' });

describe("a limit's record in dura_flow", () => {
  it('given a record written before the compact form, admission reads it, keeps its line and writes it back compact', async () => {
    const { kv, store } = await open();
    const limit: ModelLimit = { model: 'openai/old-form', requestsPerMinute: 1 };
    const old = {
      at: NOW - 1_000,
      levels: { requests: -3 },
      slots: {},
      queue: {},
      line: {
        'r5:0': { tenant: 'default', priority: 0, since: NOW - 900, until: NOW + 300_000 },
        'r6:0': { tenant: 'default', priority: 0, since: NOW - 800, until: NOW + 360_000, woken: NOW - 10 },
      },
      served: { default: 5 },
      virtual: 4,
    };
    await kv.put(`l.${encoded(limit.model)}`, JSON.stringify(old));
    const outcome = await store.update(limit.model, (record) => {
      expect(record).toEqual(old);
      const taken = takeTicket(record, limit, call('r7:0'), NOW);
      return { record: taken.record, result: taken };
    });
    expect(outcome.outcome).toMatchObject({ kind: 'line', ahead: 2 });
    const entry = await kv.get(`l.${encoded(limit.model)}`);
    expect(entry?.json<{ v?: number }>().v).toBe(2);
    expect(decodeLimitRecord(entry?.json())).toEqual(outcome.record);
    expect(Object.keys(outcome.record.line ?? {})).toEqual(['r5:0', 'r6:0', 'r7:0']);
  });

  it(`given a full line (${MAX_LINE} callers), its entry holds under 40 bytes a caller`, async () => {
    const { kv, store } = await open();
    const model = 'openai/full-line';
    await store.update(model, (record): { record: LimitRecord; result: undefined } => {
      const line: NonNullable<LimitRecord['line']> = {};
      for (let i = 1; i <= MAX_LINE; i++)
        line[`cap-${String(i).padStart(6, '0')}:0`] = {
          tenant: 'default',
          priority: 0,
          since: NOW - (MAX_LINE - i) * 50,
          until: NOW + Math.min(6 * 3_600_000, i * 60_000) + 30_000,
        };
      return { record: { ...record, line }, result: undefined };
    });
    const entry = await kv.get(`l.${encoded(model)}`);
    expect(entry!.length / MAX_LINE).toBeLessThan(40);
    expect(Object.keys(decodeLimitRecord(entry?.json()).line ?? {})).toHaveLength(MAX_LINE);
  });
});
