import { describe, expect, it } from 'vitest';
import { CURRENT_EVENT_VERSIONS, runSubject, STREAMS } from '@dura/contracts';
import { CorruptEvent } from '../src/index';
import {
  retryUntil,
  useNatsConnections,
  useTestInfra,
  useEventStore,
  appendEach,
  appendInterleaved,
} from './infra';
import { runEvents } from './run-events';

const env = useEventStore(useNatsConnections(useTestInfra({ database: false })));
let corruptRuns = 0;

/** Publishes raw bytes on a run's subject, bypassing the store, as a buggy or foreign producer could. */
async function publishRaw(runId: string, payload: string): Promise<number> {
  return (await env.js.publish(runSubject(runId), payload)).seq;
}

describe('read', () => {
  it('returns only the events with seq >= fromSeq, typed and with their sequence stamped on', async () => {
    // Interleaved with another run, so the run's sequences have gaps.
    await appendInterleaved(env.store, 'reader', 'bystander');

    const all = await env.store.read('reader');
    expect(all.map((e) => e.type)).toEqual(['run_requested', 'run_started', 'thought', 'run_completed']);
    expect(all.every((e) => e.meta.runId === 'reader')).toBe(true);
    const thought = all[2]!;
    if (thought.type !== 'thought') throw new Error('expected a thought');
    expect(thought.data.decision).toEqual({ kind: 'complete', output: 'step 1' });

    for (const fromSeq of [all[1]!.seq, all[2]!.seq - 1, all[3]!.seq]) {
      expect(await env.store.read('reader', { fromSeq }), `fromSeq ${fromSeq}`).toEqual(
        all.filter((e) => e.seq >= fromSeq),
      );
    }
    expect(await env.store.read('reader', { fromSeq: 1 })).toEqual(all);
  });

  it('upcasts events stored by an older release to the current version', async () => {
    const meta = { id: 'legacy:1', runId: 'legacy', ts: '2024-06-01T00:00:00.000Z', correlationId: 'legacy' };
    const data = { runId: 'legacy', plan: [{ tool: 'echo', args: { n: 1 } }] };
    const seq = await publishRaw('legacy', JSON.stringify({ type: 'run_requested', v: 1, data, meta }));

    const [event] = await env.store.read('legacy');

    expect(event).toEqual({
      type: 'run_requested',
      v: CURRENT_EVENT_VERSIONS.run_requested,
      data: { request: { v: 1, runId: 'legacy', agent: { kind: 'scripted', steps: data.plan } } },
      meta,
      seq,
    });
  });

  it('returns [] for a run with no events at once, without waiting for a fetch to time out', async () => {
    const started = Date.now();
    expect(await env.store.read('never-written')).toEqual([]);
    expect(await env.store.read('reader', { fromSeq: 1_000_000 })).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('reads a run longer than one fetch batch, in order', async () => {
    const run = runEvents('long');
    const events = [run.requested(), ...Array.from({ length: 1100 }, (_, i) => run.thought(i))];
    await env.store.append('long', events, { expectedSeq: 0 });

    const read = await env.store.read('long');

    expect(read).toHaveLength(events.length);
    expect(read.map((e) => e.meta.id)).toEqual(events.map((e) => e.meta.id));
  });

  it.each([
    ['is not JSON', '{"type": "thought", oops', /not JSON/],
    ['is not an event', JSON.stringify({ hello: 'world' }), /malformed envelope/],
    [
      'has data of the wrong shape',
      JSON.stringify({ ...runEvents('x').started(), type: 'run_failed', v: 1 }),
      /invalid data/,
    ],
  ])('throws CorruptEvent naming the seq of a stored message that %s', async (_, payload, reason) => {
    corruptRuns += 1;
    const runId = `corrupt-${corruptRuns}`;
    const run = runEvents(runId);
    await appendEach(env.store, runId, [run.requested()]);
    const badSeq = await publishRaw(runId, payload);
    await appendEach(env.store, runId, [run.started()]);

    const error = await env.store.read(runId).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CorruptEvent);
    expect(error).toMatchObject({ code: 'corrupt_event', retryable: false, seq: badSeq });
    expect((error as Error).message).toMatch(new RegExp(`seq ${badSeq}\\b`));
    expect((error as Error).message).toMatch(reason);
    // An operator can still read around it.
    expect((await env.store.read(runId, { fromSeq: badSeq + 1 })).map((e) => e.type)).toEqual([
      'run_started',
    ]);
  });

  it('leaves no consumer behind, even after a failed read', async () => {
    await retryUntil(async () => {
      const consumers = await env.jsm.consumers.list(STREAMS.runs).next();
      expect(consumers).toEqual([]);
    }, 5000);
  });
});
