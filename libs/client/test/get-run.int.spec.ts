import { describe, expect, it } from 'vitest';
import { callId, fold, initialRunState } from '@dura/core';
import { newLog, toNew, useClientFixture } from './infra';

const fixture = useClientFixture();

describe('getRun', () => {
  it('is the fold of the run’s log, at every point of the run', async () => {
    const { client, store } = fixture();
    const log = newLog('folded')
      .request([{ tool: 'echo', args: { n: 1 } }])
      .start();
    let lastSeq = (await store.append('folded', toNew(log.events), { expectedSeq: 0 })).lastSeq;
    expect((await client.getRun('folded')).status).toBe('running');

    const before = log.events.length;
    log.think([{ tool: 'echo', args: { n: 1 } }]).intents();
    lastSeq = (await store.append('folded', toNew(log.events.slice(before)), { expectedSeq: lastSeq }))
      .lastSeq;
    const pending = await client.getRun('folded');
    expect(pending).toEqual(fold(await store.read('folded')));
    expect(pending.calls).toHaveLength(1);

    const waiting = log.events.length;
    log.complete(callId(1), { echoed: 1 }).finish({ done: true });
    await store.append('folded', toNew(log.events.slice(waiting)), { expectedSeq: lastSeq });

    const state = await client.getRun('folded');
    expect(state).toEqual(fold(await store.read('folded')));
    expect(state).toMatchObject({ status: 'completed', steps: 1 });
    expect(state.lastSeq).toBe((await store.read('folded')).at(-1)?.seq);
  });

  it('is the initial state for a run with no events', async () => {
    expect(await fixture().client.getRun('nobody')).toEqual(fold([]));
    expect(fold([])).toEqual(initialRunState());
  });

  it('readEvents returns the same events as the store, from a sequence', async () => {
    const { client, store } = fixture();
    await store.append('read-back', toNew(newLog('read-back').request().start().finish().events), {
      expectedSeq: 0,
    });
    const all = await store.read('read-back');
    expect(all).toHaveLength(4);
    expect(await client.readEvents('read-back')).toEqual(all);
    expect(await client.readEvents('read-back', { fromSeq: all[2]!.seq })).toEqual(all.slice(2));
  });
});
