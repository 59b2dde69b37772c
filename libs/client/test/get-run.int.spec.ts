import { describe, expect, it } from 'vitest';
import { callId, fold } from '@dura/core';
import { RunNotFound } from '../src/index';
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

  it('throws RunNotFound, saying how to find runs, for a run with no events', async () => {
    const error = await fixture()
      .client.getRun('nobody')
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(RunNotFound);
    expect(error).toMatchObject({ code: 'run_not_found', runId: 'nobody', retryable: false });
    expect((error as Error).message).toMatch(/nobody has no events: check the run id/);
  });

  it('lastSeq is the seq of the run’s last event, 0 for a run with none', async () => {
    const { client, store } = fixture();
    const appended = await store.append('last-seq', toNew(newLog('last-seq').request().start().events), {
      expectedSeq: 0,
    });

    expect(await client.lastSeq('last-seq')).toBe(appended.lastSeq);
    expect(await client.lastSeq('never-submitted')).toBe(0);
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
