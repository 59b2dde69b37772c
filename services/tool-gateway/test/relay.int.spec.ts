import { describe, expect, it, vi } from 'vitest';
import { asc, inArray, isNull, like } from 'drizzle-orm';
import type { Subscription } from '@nats-io/nats-core';
import { STREAMS, runSubject } from '@dura/contracts';
import { eventually, useTestInfra } from '@dura/testing';
import { createRelay, outbox, type Relay } from '../src/index';
import { decideTasks, sleep, storedMessages, testLogger } from './support';
import { observation, useRelays } from './gateway-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const env = useRelays(infra);

async function relayOn(name: string, options: { batchSize?: number } = {}): Promise<Relay> {
  const conn = await env.open(name);
  return createRelay({ db: conn.db, js: conn.js, log: testLogger(name), pollMs: 50, ...options });
}

/** Queues an observation the way the gateway's transaction does: straight into the outbox. */
async function queue(runId: string, msgId: string, n: number): Promise<void> {
  const event = observation(runId, msgId, n);
  await env.setup.db.insert(outbox).values({ runId, msgId, subject: runSubject(runId), payload: event });
}

async function logged(subject: string): Promise<{ seq: number; msgId: string | undefined }[]> {
  const messages = await storedMessages(env.setup.jsm, STREAMS.runs, subject);
  return messages.map((msg) => ({ seq: msg.seq, msgId: msg.header?.get('Nats-Msg-Id') }));
}

async function unsent(prefix: string): Promise<number> {
  return (
    await env.setup.db
      .select()
      .from(outbox)
      .where(like(outbox.runId, `${prefix}%`))
  ).filter((row) => row.sentAt === null).length;
}

describe('the outbox relay', () => {
  it('publishes rows in id order, across batches and runs, with the observation id as msg-id', async () => {
    // Msg-ids sort against insertion order, so ordering by anything but the id would show.
    const queued: string[] = [];
    for (let n = 1; n <= 12; n += 1) {
      const msgId = `${String.fromCharCode(122 - n)}-${n}`;
      await queue(`run-order-${n % 2}`, msgId, n);
      queued.push(msgId);
    }
    const relay = await relayOn('relay-order', { batchSize: 5 });
    expect(await relay.relayOnce()).toBe(5);
    expect(await relay.relayOnce()).toBe(5);
    expect(await relay.relayOnce()).toBe(2);
    expect(await relay.relayOnce()).toBe(0);

    const log = await logged('dura.run.*');
    expect(log.map((entry) => entry.msgId)).toEqual(queued);
    const rows = await env.setup.db
      .select()
      .from(outbox)
      .where(inArray(outbox.msgId, queued))
      .orderBy(asc(outbox.id));
    expect(rows.map((row) => row.msgId)).toEqual(queued);
    expect(rows.every((row) => row.sentAt !== null)).toBe(true);

    // Each observation is followed by a decide task for its run, keyed by the observation's sequence.
    const decides = await decideTasks(env.setup.jsm, 'run-order-1');
    const seqsOfRun1 = (await logged(runSubject('run-order-1'))).map((entry) => entry.seq);
    expect(decides.map((d) => d.task.afterSeq)).toEqual(seqsOfRun1);
    expect(decides.map((d) => d.msgId)).toEqual(seqsOfRun1.map((seq) => `run-order-1@${seq}`));
  });

  it('never relays a row twice when two relays run relayOnce concurrently (per-run locks)', async () => {
    const ROWS = 60;
    for (let n = 1; n <= ROWS; n += 1) await queue(`run-race-${n % 3}`, `race-${n}`, n);
    // A core subscription sees every publish, including ones JetStream would drop as duplicates.
    const seen = new Map<string, number>();
    const sub: Subscription = env.setup.nc.subscribe('dura.run.*', {
      callback: (_err, msg) => {
        const id = msg.headers?.get('Nats-Msg-Id') ?? '';
        if (id.startsWith('race-')) seen.set(id, (seen.get(id) ?? 0) + 1);
      },
    });
    await env.setup.nc.flush();
    try {
      const [first, second] = [
        await relayOn('relay-a', { batchSize: 4 }),
        await relayOn('relay-b', { batchSize: 4 }),
      ];
      let relayed = 0;
      for (let round = 0; (await unsent('run-race-')) > 0 && round < 100; round += 1) {
        const counts = await Promise.all([
          first.relayOnce(),
          second.relayOnce(),
          first.relayOnce(),
          second.relayOnce(),
        ]);
        relayed += counts.reduce((a, b) => a + b, 0);
      }
      expect(relayed).toBe(ROWS);
      await env.setup.nc.flush();
      await sleep(100);
    } finally {
      sub.unsubscribe();
    }
    expect(seen.size).toBe(ROWS);
    expect([...seen.values()].every((count) => count === 1)).toBe(true);
    const log = (await logged('dura.run.*')).filter((entry) => entry.msgId?.startsWith('race-'));
    expect(log).toHaveLength(ROWS);
    expect(new Set(log.map((entry) => entry.msgId)).size).toBe(ROWS);
  });

  it('does not wait to mark a row a pass holds: the pass marks it, or a later pass re-sends it', async () => {
    await queue('run-held', 'held-1', 1);
    const [row] = await env.setup.db.select().from(outbox).where(like(outbox.msgId, 'held-1'));
    if (!row) throw new Error('the queued row is missing');
    const relay = await relayOn('relay-held');
    // A pass of another replica holds the row (it selected it FOR UPDATE and is publishing it) and then dies.
    let releasePass: () => void = () => undefined;
    const passHolds = new Promise<void>((resolve) => (releasePass = resolve));
    let rowLocked: () => void = () => undefined;
    const locked = new Promise<void>((resolve) => (rowLocked = resolve));
    const pass = env.setup.db
      .transaction(async (tx) => {
        await tx
          .select()
          .from(outbox)
          .where(inArray(outbox.id, [row.id]))
          .for('update');
        rowLocked();
        await passHolds;
        throw new Error('the pass died');
      })
      .catch(() => undefined);
    await locked;
    try {
      await relay.sendNow(row);
      const waited = await Promise.race([relay.marked().then(() => false), sleep(5_000).then(() => true)]);
      expect(waited, 'marking waited for the pass that holds the row').toBe(false);
      expect(await unsent('run-held'), 'skipped while held').toBe(1);
    } finally {
      releasePass();
      await pass;
    }
    expect(await unsent('run-held'), 'still unsent after the pass died').toBe(1);
    expect(await relay.relayOnce()).toBeGreaterThanOrEqual(1);
    expect(await unsent('run-held')).toBe(0);
    const log = (await logged(runSubject('run-held'))).filter((entry) => entry.msgId === 'held-1');
    expect(log, 'published twice, stored once').toHaveLength(1);
  });

  it('keeps rows queued while NATS is down and publishes them once it is back', async () => {
    const relay = await relayOn('relay-offline');
    relay.start();
    env.running.push(relay);

    await infra().nats.kill();
    try {
      for (let n = 1; n <= 5; n += 1) await queue('run-offline', `offline-${n}`, n);
      relay.wake();
      await sleep(1500);
      expect(await unsent('run-offline')).toBe(5);
    } finally {
      await infra().nats.restart();
    }

    await eventually(
      async () => ((await unsent('run-offline')) === 0 ? true : undefined),
      'the relay to catch up after the restart',
      30_000,
    );
    const log = await logged(runSubject('run-offline'));
    expect(log.map((entry) => entry.msgId)).toEqual([
      'offline-1',
      'offline-2',
      'offline-3',
      'offline-4',
      'offline-5',
    ]);
    expect((await decideTasks(env.setup.jsm, 'run-offline')).map((d) => d.task.afterSeq)).toEqual(
      log.map((entry) => entry.seq),
    );
    expect(await env.setup.db.select().from(outbox).where(isNull(outbox.sentAt))).toEqual([]);
  });
});
