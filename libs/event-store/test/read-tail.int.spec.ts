import { describe, expect, it } from 'vitest';
import type { NewEvent } from '@dura/contracts';
import { DIRECT_READ_LIMIT, type ReadReport } from '../src/index';
import { useNatsConnections, useTestInfra, useEventStore } from './infra';
import { runEvents } from './run-events';

const infra = useTestInfra({ database: false });
const open = useNatsConnections(infra);
const reads: ReadReport[] = [];
const env = useEventStore(open, { onRead: (report) => reads.push(report) });

async function appendEach(runId: string, events: NewEvent[]): Promise<number[]> {
  const seqs: number[] = [];
  for (const event of events)
    seqs.push(...(await env.store.append(runId, [event], { expectedSeq: 'any' })).seqs);
  return seqs;
}

describe('readTail', () => {
  it('returns what read returns from the same sequence, skipping other runs', async () => {
    const mine = runEvents('tail');
    const other = runEvents('tail-bystander');
    await appendEach('tail', [mine.requested()]);
    await appendEach('tail-bystander', [other.requested()]);
    await appendEach('tail', [mine.started(), mine.thought(1)]);
    await appendEach('tail-bystander', [other.started()]);
    await appendEach('tail', [mine.completed()]);
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
    const seqs = await appendEach('tail-through', [mine.requested(), mine.started(), mine.thought(1)]);
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
    await appendEach('tail-long', events);
    const all = await env.store.read('tail-long');
    expect(all).toHaveLength(events.length);
    reads.length = 0;
    const tail = await env.store.readTail('tail-long', { fromSeq: all[1]!.seq });
    expect(tail).toEqual(all.slice(1));
    expect(reads).toEqual([{ runId: 'tail-long', fromSeq: all[1]!.seq, count: all.length - 1 }]);
  });
});
