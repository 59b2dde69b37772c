import { afterAll, describe, expect, it } from 'vitest';
import type { NewEvent, RunEvent } from '@dura/contracts';
import { callId } from '@dura/core';
import { retryUntil, useTestInfra } from '@dura/testing';
import { connectDuraClient } from '../src/index';
import { newLog, sleep, toNew, useClientFixture } from './infra';

const infra = useTestInfra({ database: false });
const fixture = useClientFixture(infra);
// The client under test owns its connection, as an application's would.
let client: ReturnType<typeof connectDuraClient> | undefined;
afterAll(async () => {
  await client?.close();
});

/** A finished run of `steps` echo calls: 2 + 3 per step + 2 events. */
function longRun(runId: string, steps: number): NewEvent[] {
  const log = newLog(runId).request().start();
  for (let i = 1; i <= steps; i += 1)
    log
      .think([{ tool: 'echo', args: { i } }])
      .intents()
      .complete(callId(i), { i });
  return toNew(log.finish().events);
}

async function appendOneByOne(runId: string, events: NewEvent[], onAppended: (i: number) => Promise<void>) {
  for (const [i, event] of events.entries()) {
    // While the server is away an append fails; its msg-id makes the retry safe.
    await retryUntil(() => fixture().store.append(runId, [event], { expectedSeq: 'any' }), 30_000, 100);
    await onAppended(i);
    await sleep(10);
  }
}

describe('watchRun across a broken connection', () => {
  it('yields every event once and in order while the nats-server restarts mid-watch', async () => {
    client = connectDuraClient({ natsUrl: fixture().natsUrl, name: 'watch-resume-test' });
    const runId = 'restarted-mid-watch';
    const events = longRun(runId, 12);
    const seen: RunEvent[] = [];
    let seenAtRestart = -1;

    const watching = (async () => {
      for await (const event of client.watchRun(runId, { resumeTimeoutMs: 45_000 })) seen.push(event);
    })();
    await appendOneByOne(runId, events, async (i) => {
      if (i !== 15) return;
      // The watcher has seen some events and waits for more: take the server away under it.
      await retryUntil(() => expect(seen.length).toBe(16), 10_000);
      seenAtRestart = seen.length;
      await infra().nats.stop();
      await sleep(500);
      await infra().nats.restart();
    });
    await watching;

    // The restart came while the watch was live, with events still to come.
    expect(seenAtRestart).toBe(16);
    const stored = await fixture().store.read(runId);
    expect(stored).toHaveLength(events.length);
    expect(seen.map((e) => e.seq)).toEqual(stored.map((e) => e.seq));
    expect(seen).toEqual(stored);
    expect(seen.at(-1)?.type).toBe('run_completed');
  });

  it('resumed from the last seq seen + 1, yields exactly the rest', async () => {
    const { store } = fixture();
    const runId = 'resumed-by-caller';
    await store.append(runId, longRun(runId, 4), { expectedSeq: 0 });
    const stored = await store.read(runId);

    const first: RunEvent[] = [];
    for await (const event of fixture().client.watchRun(runId)) {
      first.push(event);
      if (first.length === 5) break; // a disconnect, as the caller sees it
    }
    const rest: RunEvent[] = [];
    for await (const event of fixture().client.watchRun(runId, { fromSeq: first.at(-1)!.seq + 1 }))
      rest.push(event);

    expect([...first, ...rest]).toEqual(stored);
  });
});
