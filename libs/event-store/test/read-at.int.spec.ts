import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { beforeAll, describe, expect, it } from 'vitest';
import { runSubject } from '@dura/contracts';
import {
  CorruptEvent,
  createEventStore,
  ensureStreams,
  type EventStore,
  type ReadReport,
} from '../src/index';
import { useNatsConnections, useTestInfra } from './infra';
import { runEvents } from './run-events';

const infra = useTestInfra({ database: false });
const open = useNatsConnections(infra);
let js: JetStreamClient;
let jsm: JetStreamManager;
let store: EventStore;
const reads: ReadReport[] = [];

beforeAll(async () => {
  ({ js, jsm } = await open());
  await ensureStreams(jsm);
  store = createEventStore({ js, jsm, onRead: (report) => reads.push(report) });
});

describe('readAt', () => {
  it("returns the run's event at a sequence, and nothing for another run's or a missing one", async () => {
    const mine = runEvents('at-mine');
    const other = runEvents('at-other');
    const { seqs } = await store.append('at-mine', [mine.requested(), mine.started()], { expectedSeq: 0 });
    const { lastSeq: otherSeq } = await store.append('at-other', [other.requested()], { expectedSeq: 0 });

    const all = await store.read('at-mine');
    expect(await store.readAt('at-mine', seqs[1]!)).toEqual(all[1]);
    expect(await store.readAt('at-mine', otherSeq)).toBeUndefined();
    expect(await store.readAt('at-mine', otherSeq + 1000)).toBeUndefined();
  });

  it('refuses a stored message that is not an event, naming its sequence', async () => {
    const { seq } = await js.publish(runSubject('at-garbage'), 'not json');
    await expect(store.readAt('at-garbage', seq)).rejects.toThrow(CorruptEvent);
  });
});

describe('storedAt', () => {
  it("gives the broker's time of the run's event at a sequence, and nothing for another run's", async () => {
    const mine = runEvents('stored-mine');
    const other = runEvents('stored-other');
    const before = Date.now();
    const { seqs } = await store.append('stored-mine', [mine.requested(), mine.started()], {
      expectedSeq: 0,
    });
    const after = Date.now();
    const { lastSeq: otherSeq } = await store.append('stored-other', [other.requested()], { expectedSeq: 0 });

    const first = await store.storedAt('stored-mine', seqs[1]!);
    // The broker runs on this host: its stamp falls within the append (to the millisecond).
    expect(first?.getTime()).toBeGreaterThanOrEqual(before - 1);
    expect(first?.getTime()).toBeLessThanOrEqual(after + 1);
    expect(await store.storedAt('stored-mine', seqs[1]!)).toEqual(first);
    expect(await store.storedAt('stored-mine', otherSeq)).toBeUndefined();
    expect(await store.storedAt('stored-mine', otherSeq + 1000)).toBeUndefined();
  });
});

describe('onRead', () => {
  it('reports every read with its run, first sequence and how many events it returned', async () => {
    const events = runEvents('counted');
    const { seqs } = await store.append(
      'counted',
      [events.requested(), events.started(), events.thought(1)],
      {
        expectedSeq: 0,
      },
    );
    reads.splice(0);

    await store.read('counted');
    await store.read('counted', { fromSeq: seqs[1]! });
    await store.read('counted', { fromSeq: seqs[2]! + 1 });
    await store.readAt('counted', seqs[0]!);
    await store.readAt('counted', seqs[2]! + 1000);

    expect(reads).toEqual([
      { runId: 'counted', fromSeq: 1, count: 3 },
      { runId: 'counted', fromSeq: seqs[1], count: 2 },
      { runId: 'counted', fromSeq: seqs[2]! + 1, count: 0 },
      { runId: 'counted', fromSeq: seqs[0], count: 1 },
      { runId: 'counted', fromSeq: seqs[2]! + 1000, count: 0 },
    ]);
  });
});
