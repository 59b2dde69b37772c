// Listing the schedules and triggers on a real nats-server while their records are being written. The key
// lister this replaced (nats.js kv.keys()) never finished on nats-server 2.9 when a key was overwritten as
// it started: the server reported one message pending for good, and the listing waited for a quiet bucket.
import { beforeAll, describe, expect, it } from 'vitest';
import { createScheduleStore, createTriggerStore, type ScheduleStore } from '../src/index';
import { useNatsConnections, useTestInfra, type NatsHandles } from './infra';

const infra = useTestInfra({ database: false });
const openNats = useNatsConnections(infra);
let nats: NatsHandles;
let schedules: ScheduleStore;

const spec = (id: string) => ({
  id,
  tenant: 'acme',
  everyMs: 60_000,
  request: { v: 1 as const, agent: { kind: 'scripted' as const, steps: [] } },
});

beforeAll(async () => {
  nats = await openNats();
  schedules = createScheduleStore({ js: nats.js });
  for (const id of ['busy', 'quiet', 'removed']) await schedules.create(spec(id), Date.now());
  await schedules.remove('removed');
});

describe('listing schedule ids', () => {
  it('lists every schedule, each time, while one of them is rewritten every few milliseconds', async () => {
    let writing = true;
    const writer = (async () => {
      let paused = false;
      while (writing) {
        paused = !paused;
        await schedules.setPaused('busy', paused, Date.now());
      }
    })();
    const listings: string[][] = [];
    try {
      for (let i = 0; i < 300; i += 1) listings.push(await schedules.ids());
    } finally {
      writing = false;
      await writer;
    }
    expect(listings).toHaveLength(300);
    // A deleted schedule keeps its delete marker in the bucket: it may be listed, and reads as absent.
    for (const ids of listings) expect(ids.filter((id) => id !== 'removed')).toEqual(['busy', 'quiet']);
    await expect(schedules.read('removed')).resolves.toBeUndefined();
    expect((await schedules.list()).map((r) => r.spec.id)).toEqual(['busy', 'quiet']);
  });
});

describe('listing event triggers', () => {
  it('lists the triggers there are, without the deleted ones', async () => {
    const triggers = createTriggerStore({ js: nats.js });
    const trigger = (id: string) => ({
      id,
      tenant: 'acme',
      subject: `dura.event.acme.${id}`,
      request: { v: 1, agent: { kind: 'scripted', steps: [] } },
    });
    for (const id of ['on_order', 'on_refund', 'on_gone']) await triggers.create(trigger(id), Date.now());
    await triggers.remove('on_gone');
    expect((await triggers.list()).map((t) => t.spec.id)).toEqual(['on_order', 'on_refund']);
  });
});
