import { describe, expect, it } from 'vitest';
import { runSubject, type RunEvent } from '@dura/contracts';
import { CorruptEvent } from '@dura/event-store';
import type { WatchOptions } from '../src/index';
import { newLog, sleep, toNew, useClientFixture } from './infra';

const fixture = useClientFixture();

/** Collects what watchRun yields; `onEvent` runs before the next event is asked for. */
async function watch(
  runId: string,
  options: WatchOptions = {},
  onEvent?: (e: RunEvent) => Promise<void> | void,
) {
  const seen: RunEvent[] = [];
  for await (const event of fixture().client.watchRun(runId, options)) {
    seen.push(event);
    await onEvent?.(event);
  }
  return seen;
}

describe('watchRun', () => {
  it('yields the stored events from fromSeq in order, typed, then live ones, and stops after the terminal event', async () => {
    const { store } = fixture();
    const log = newLog('watched')
      .request([{ tool: 'echo', args: {} }])
      .start()
      .think([{ tool: 'echo', args: {} }]);
    const [requested, started, thought] = toNew(log.events);
    const first = await store.append('watched', [requested!, started!, thought!], { expectedSeq: 0 });
    const tail = toNew(log.intents().complete('call-1').finish().events.slice(3));

    // Each event after the stored ones is appended only once the watcher has seen the one before.
    const seen = await watch('watched', { fromSeq: first.seqs[1] }, async (event) => {
      const pending = event.seq >= first.lastSeq ? tail.shift() : undefined;
      if (pending) await store.append('watched', [pending], { expectedSeq: event.seq });
    });

    expect(seen.map((e) => e.type)).toEqual([
      'run_started',
      'thought',
      'tool_call_requested',
      'tool_call_completed',
      'thought',
      'run_completed',
    ]);
    expect(seen[0]?.seq).toBe(first.seqs[1]);
    for (const [i, event] of seen.entries()) if (i > 0) expect(event.seq).toBeGreaterThan(seen[i - 1]!.seq);
    const completed = seen.find((e) => e.type === 'tool_call_completed');
    if (completed?.type !== 'tool_call_completed') throw new Error('expected a tool_call_completed');
    expect(completed.data).toMatchObject({ callId: 'call-1', result: { ok: true } });
    expect(seen).toEqual(await store.read('watched', { fromSeq: first.seqs[1] }));
  });

  it('waits for a run that has no events yet and follows it live', async () => {
    const { store } = fixture();
    const events = toNew(newLog('late').request().start().finish().events);
    const watching = watch('late');

    await sleep(200);
    await store.append('late', events.slice(0, 2), { expectedSeq: 0 });
    await sleep(100);
    await store.append('late', events.slice(2), { expectedSeq: 'any' });

    expect((await watching).map((e) => e.type)).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'run_completed',
    ]);
  });

  it('stops after a rejection, which is terminal too', async () => {
    const rejected = newLog('refused').add('run_rejected', {
      error: { code: 'unknown_tool', message: 'no such tool' },
    });
    await fixture().store.append('refused', toNew(rejected.events), { expectedSeq: 0 });

    expect((await watch('refused')).map((e) => e.type)).toEqual(['run_rejected']);
  });

  it('keeps following past the terminal event with untilFinished: false, until the signal aborts', async () => {
    const { store } = fixture();
    const log = newLog('after-end').request().start().finish();
    await store.append('after-end', toNew(log.events), { expectedSeq: 0 });
    const controller = new AbortController();

    const seen = await watch(
      'after-end',
      { untilFinished: false, signal: controller.signal },
      async (event) => {
        if (event.type === 'run_completed')
          await store.append('after-end', toNew(log.snapshot().events.slice(-1)), { expectedSeq: 'any' });
        if (event.type === 'snapshot_taken') controller.abort();
      },
    );

    expect(seen.map((e) => e.type)).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'run_completed',
      'snapshot_taken',
    ]);
  });

  it('ends promptly when the signal aborts while it waits for the next event', async () => {
    await fixture().store.append('aborted', toNew(newLog('aborted').request().start().events), {
      expectedSeq: 0,
    });
    const controller = new AbortController();

    const watching = watch('aborted', { signal: controller.signal });
    await sleep(300);
    const abortedAt = Date.now();
    controller.abort();

    expect((await watching).map((e) => e.type)).toEqual(['run_requested', 'run_started']);
    expect(Date.now() - abortedAt).toBeLessThan(2000);
  });

  it('yields nothing when the signal has already aborted', async () => {
    await fixture().store.append('pre-aborted', toNew(newLog('pre-aborted').request().events), {
      expectedSeq: 0,
    });

    expect(await watch('pre-aborted', { signal: AbortSignal.abort() })).toEqual([]);
  });

  it('throws CorruptEvent naming the seq of a stored message that is not an event', async () => {
    const { js, store } = fixture();
    await store.append('garbled', toNew(newLog('garbled').request().events), { expectedSeq: 0 });
    const { seq } = await js.publish(runSubject('garbled'), 'not json');

    const error = await watch('garbled').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CorruptEvent);
    expect(error).toMatchObject({ code: 'corrupt_event', seq });
  });
});
