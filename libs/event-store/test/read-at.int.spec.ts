import { describe, expect, it } from 'vitest';
import { runSubject } from '@dura/contracts';
import { CorruptEvent } from '../src/index';
import { useNatsConnections, useTestInfra, useEventStore } from './infra';
import { runEvents } from './run-events';

const env = useEventStore(useNatsConnections(useTestInfra({ database: false })));

describe('readAt', () => {
  it("returns the run's event at a sequence, and nothing for another run's or a missing one", async () => {
    const mine = runEvents('at-mine');
    const other = runEvents('at-other');
    const { seqs } = await env.store.append('at-mine', [mine.requested(), mine.started()], {
      expectedSeq: 0,
    });
    const { lastSeq: otherSeq } = await env.store.append('at-other', [other.requested()], { expectedSeq: 0 });

    const all = await env.store.read('at-mine');
    expect(await env.store.readAt('at-mine', seqs[1]!)).toEqual(all[1]);
    expect(await env.store.readAt('at-mine', otherSeq)).toBeUndefined();
    expect(await env.store.readAt('at-mine', otherSeq + 1000)).toBeUndefined();
  });

  it('refuses a stored message that is not an event, naming its sequence', async () => {
    const { seq } = await env.js.publish(runSubject('at-garbage'), 'not json');
    await expect(env.store.readAt('at-garbage', seq)).rejects.toThrow(CorruptEvent);
  });
});

describe('storedAt', () => {
  it("gives the broker's time of the run's event at a sequence, and nothing for another run's", async () => {
    const mine = runEvents('stored-mine');
    const other = runEvents('stored-other');
    const before = Date.now();
    const { seqs } = await env.store.append('stored-mine', [mine.requested(), mine.started()], {
      expectedSeq: 0,
    });
    const after = Date.now();
    const { lastSeq: otherSeq } = await env.store.append('stored-other', [other.requested()], {
      expectedSeq: 0,
    });

    const first = await env.store.storedAt('stored-mine', seqs[1]!);
    // The broker runs on this host: its stamp falls within the append (to the millisecond).
    expect(first?.getTime()).toBeGreaterThanOrEqual(before - 1);
    expect(first?.getTime()).toBeLessThanOrEqual(after + 1);
    expect(await env.store.storedAt('stored-mine', seqs[1]!)).toEqual(first);
    expect(await env.store.storedAt('stored-mine', otherSeq)).toBeUndefined();
    expect(await env.store.storedAt('stored-mine', otherSeq + 1000)).toBeUndefined();
  });
});

describe('onRead', () => {
  it('reports every read with its run, first sequence and how many events it returned', async () => {
    const events = runEvents('counted');
    const { seqs } = await env.store.append(
      'counted',
      [events.requested(), events.started(), events.thought(1)],
      {
        expectedSeq: 0,
      },
    );
    env.reads.splice(0);

    await env.store.read('counted');
    await env.store.read('counted', { fromSeq: seqs[1]! });
    await env.store.read('counted', { fromSeq: seqs[2]! + 1 });
    await env.store.readAt('counted', seqs[0]!);
    await env.store.readAt('counted', seqs[2]! + 1000);

    expect(env.reads).toEqual([
      { runId: 'counted', fromSeq: 1, count: 3 },
      { runId: 'counted', fromSeq: seqs[1], count: 2 },
      { runId: 'counted', fromSeq: seqs[2]! + 1, count: 0 },
      { runId: 'counted', fromSeq: seqs[0], count: 1 },
      { runId: 'counted', fromSeq: seqs[2]! + 1000, count: 0 },
    ]);
  });
});
