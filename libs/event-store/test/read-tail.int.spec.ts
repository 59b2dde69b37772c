import { describe, expect, it } from 'vitest';
import { DIRECT_READ_LIMIT } from '../src/index';
import { useNatsConnections, useTestInfra, useEventStore, appendEach, appendInterleaved } from './infra';
import { runEvents } from './run-events';

const env = useEventStore(useNatsConnections(useTestInfra({ database: false })));

describe('readTail', () => {
  it('returns what read returns from the same sequence, skipping other runs', async () => {
    await appendInterleaved(env.store, 'tail', 'tail-bystander');
    const all = await env.store.read('tail');
    for (const event of all) {
      expect(await env.store.readTail('tail', { fromSeq: event.seq }), `fromSeq ${event.seq}`).toEqual(
        all.filter((e) => e.seq >= event.seq),
      );
    }
    expect(await env.store.readTail('tail', { fromSeq: all.at(-1)!.seq + 1 })).toEqual([]);
  });

  it('stops at the first event at or past `through`', async () => {
    const mine = runEvents('tail-through');
    const seqs = await appendEach(env.store, 'tail-through', [
      mine.requested(),
      mine.started(),
      mine.thought(1),
    ]);
    const upToSecond = await env.store.readTail('tail-through', { fromSeq: seqs[0]!, through: seqs[1]! });
    expect(upToSecond.map((e) => e.seq)).toEqual(seqs.slice(0, 2));
    // A `through` between two of the run's sequences ends at the next event of the run.
    const pastFirst = await env.store.readTail('tail-through', { fromSeq: seqs[0]!, through: seqs[0]! + 1 });
    expect(pastFirst.map((e) => e.seq)).toEqual(seqs.slice(0, 2));
  });

  it('reads a tail longer than the direct-get limit completely and reports one read', async () => {
    const mine = runEvents('tail-long');
    const events = [mine.requested(), mine.started()];
    for (let step = 1; events.length < DIRECT_READ_LIMIT * 3; step += 1) events.push(mine.thought(step));
    await appendEach(env.store, 'tail-long', events);
    const all = await env.store.read('tail-long');
    expect(all).toHaveLength(events.length);
    env.reads.length = 0;
    const tail = await env.store.readTail('tail-long', { fromSeq: all[1]!.seq });
    expect(tail).toEqual(all.slice(1));
    expect(env.reads).toEqual([{ runId: 'tail-long', fromSeq: all[1]!.seq, count: all.length - 1 }]);
  });
});
