import { describe, expect, it } from 'vitest';
import { STREAMS } from '@dura/contracts';
import { createRunReader, createRunWakeups, followRun } from '../src/index';
import { retryUntil, useNatsConnections, useTestInfra, useEventStore } from './infra';
import { runEvents } from './run-events';

const infra = useTestInfra({ database: false });
const open = useNatsConnections(infra);
const env = useEventStore(open);

describe('followRun on a real server', () => {
  it('yields history then live events promptly (woken, not polled), and creates no consumer', async () => {
    const reader = await open();
    const wakeups = createRunWakeups(reader.nc);
    const runId = 'followed-live';
    const events = runEvents(runId);
    await env.store.append(runId, [events.requested(), events.started()], { expectedSeq: 'any' });
    const abort = new AbortController();
    const seen: { seq: number; at: number }[] = [];
    const following = (async () => {
      // A poll interval far beyond the test: only wake-ups can deliver the live events in time.
      for await (const msg of followRun({ reader: createRunReader(reader.jsm), wakeups }, runId, {
        fromSeq: 1,
        signal: abort.signal,
        pollMs: 600_000,
      }))
        seen.push({ seq: msg.seq, at: Date.now() });
    })();
    await retryUntil(() => expect(seen).toHaveLength(2), 10_000);
    // Past the re-reads after the first read: the follower now sleeps until woken.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(wakeups.subscribed()).toBe(1);
    for (let i = 1; i <= 5; i += 1) {
      const appendedAt = Date.now();
      await env.store.append(runId, [events.thought(i)], { expectedSeq: 'any' });
      // The poll interval is 600 s: an event that arrives within this wait came through its wake-up.
      await retryUntil(() => expect(seen).toHaveLength(2 + i), 30_000);
      expect(seen.at(-1)!.at).toBeGreaterThanOrEqual(appendedAt);
    }
    expect((await env.jsm.streams.info(STREAMS.runs)).state.consumer_count).toBe(0);
    abort.abort();
    await following;
    expect(seen.map((s) => s.seq)).toEqual((await env.store.read(runId)).map((e) => e.seq));
    expect(wakeups.subscribed()).toBe(0);
  });

  it('followers of one run share one wake-up subscription, dropped with the last', async () => {
    const { nc } = await open();
    const wakeups = createRunWakeups(nc);
    const a = wakeups.open('shared-run');
    const b = wakeups.open('shared-run');
    const c = wakeups.open('other-run');
    expect(wakeups.subscribed()).toBe(2);
    a.close();
    expect(wakeups.subscribed()).toBe(2);
    b.close();
    c.close();
    expect(wakeups.subscribed()).toBe(0);
  });
});
