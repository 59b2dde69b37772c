// The shipped NATS permissions (deploy/nats/permissions.conf) and the flow-control bucket: planners write
// limits and declarations; the projector reads them (GET /flow/limits) and may write, delete or purge none.
import { describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { takeSlot, type ModelLimit } from '@dura/core';
import { createFlowStore, declarationEntry, startDeclaring } from '@dura/planner';
import { readFlowState } from '@dura/projector';
import { createLogger } from '@dura/service-kit';
import { expectDenied, useSecuredNats } from './secured-nats';
import { eventually } from './system';

const { as } = useSecuredNats();
const log = createLogger({ service: 'test', level: 'error', write: () => undefined });
const limit: ModelLimit = { model: 'openai/gpt-4o-mini', concurrentCalls: 2 };

describe('dura_flow under the shipped permissions', () => {
  it('a planner writes a limit and its declaration; the projector reads both', async () => {
    const js = jetstream(await as('planner'));
    const declaring = startDeclaring({ js, limits: [limit], log });
    try {
      await createFlowStore({ js, log }).update(limit.model, (record) => ({
        record: takeSlot(record, limit, 'run_1:0', 60_000, Date.now()).record,
        result: undefined,
      }));
      const projector = jetstream(await as('projector'));
      const state = await eventually(async () => {
        const read = await readFlowState(projector);
        return read.declarations.length === 1 && read.records.length === 1 ? read : undefined;
      }, 'the limit and its declaration, read as the projector');
      expect(state.declarations[0]?.limit).toEqual(limit);
      expect(state.records[0]?.key).toBe(limit.model);
      expect(Object.keys(state.records[0]?.record.slots ?? {})).toHaveLength(1);
    } finally {
      declaring.stop();
    }
  });

  it('the projector may not write, delete or purge an entry, nor delete a message of the bucket', async () => {
    const nc = await as('projector');
    const kv = await new Kvm(jetstream(nc)).open('dura_flow');
    const record = `l.${Buffer.from(limit.model).toString('base64url')}`;
    await expectDenied(kv.put(record, JSON.stringify({ at: 0, levels: {}, slots: {}, queue: {} })));
    await expectDenied(kv.put(declarationEntry({ ...limit, concurrentCalls: 1000 }), '{}'));
    await expectDenied(kv.delete(record));
    await expectDenied(kv.purge(record));
    const jsm = await jetstreamManager(nc);
    const last = await jsm.streams.getMessage('KV_dura_flow', { last_by_subj: `$KV.dura_flow.${record}` });
    expect(last?.seq).toBeGreaterThan(0);
    await expectDenied(jsm.streams.deleteMessage('KV_dura_flow', last!.seq));
    await expectDenied(jsm.streams.purge('KV_dura_flow'));
    // Still there, unchanged.
    const after = await jsm.streams.getMessage('KV_dura_flow', { last_by_subj: `$KV.dura_flow.${record}` });
    expect(after?.seq).toBe(last?.seq);
  });

  it('an application (user client) may not read it', async () => {
    await expectDenied(readFlowState(jetstream(await as('client'))));
  });
});
