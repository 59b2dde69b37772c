import { nanos } from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import { ensureDurableConsumer } from '../src/index';
import { STREAM, useConsumerHarness } from './consumer-harness';
import { eventually, sleep, useNatsConnections, useTestInfra } from './infra';

const infra = useTestInfra({ database: false });
const kit = useConsumerHarness(infra);
const open = useNatsConnections(infra);

describe('startConsumerLoop concurrency', () => {
  it('never runs more than `concurrency` handlers at once, and uses all of them', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let done = 0;
    await kit.start(
      'bounded',
      async () => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await sleep(40);
        inFlight -= 1;
        done += 1;
      },
      { concurrency: 3 },
    );
    await kit.publish('bounded', ...Array.from({ length: 15 }, (_, i) => `m${i}`));

    await eventually(() => expect(done).toBe(15));
    expect(maxInFlight).toBe(3);
    await eventually(() => kit.settled('bounded'));
  });
});

describe('ConsumerLoop.stop', () => {
  it('waits for in-flight handlers to finish (and ack) before it resolves', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    const finished: string[] = [];
    const { loop } = await kit.start('draining', async (msg) => {
      started.push(msg.string());
      await gate;
      finished.push(msg.string());
    });
    // A failed assertion must not leave the handler (and so afterAll's stop) waiting forever.
    try {
      await kit.publish('draining', 'slow');
      await eventually(() => expect(started).toEqual(['slow']));

      let stopped = false;
      const stopping = loop.stop().then(() => (stopped = true));
      await sleep(300);
      expect(stopped).toBe(false);

      release();
      await stopping;
      expect(finished).toEqual(['slow']);
    } finally {
      release();
    }
    await eventually(() => kit.settled('draining'));
    await loop.done;
  });

  it('takes no new messages after stop', async () => {
    const seen: string[] = [];
    const { loop } = await kit.start('stopped', (msg) => {
      seen.push(msg.string());
    });
    await kit.publish('stopped', 'before');
    await eventually(() => expect(seen).toEqual(['before']));

    await loop.stop();
    await kit.publish('stopped', 'after');
    await sleep(300);

    expect(seen).toEqual(['before']);
    expect((await kit.nats().jsm.consumers.info(STREAM, 'stopped')).num_pending).toBe(1);
  });
});

describe('ensureDurableConsumer', () => {
  it('creates the consumer once; calling it again keeps its position', async () => {
    const { jsm } = kit.nats();
    const spec = kit.spec('durable');
    await ensureDurableConsumer(jsm, spec);
    await kit.publish('durable', 'x');
    const before = await jsm.consumers.info(STREAM, 'durable');

    await ensureDurableConsumer(jsm, spec);

    const after = await jsm.consumers.info(STREAM, 'durable');
    expect(after.created).toBe(before.created);
    expect(after.num_pending).toBe(1);
    // One delivery more than the loop's own limit, so the server never drops a message not yet dead-lettered.
    expect(after.config).toMatchObject({
      durable_name: 'durable',
      filter_subject: 'kit.durable',
      max_deliver: spec.maxDeliver + 1,
      ack_wait: nanos(spec.ackWaitMs),
    });
  });

  it('is safe to call concurrently from several replicas', async () => {
    const replicas = await Promise.all([open(), open(), open()]);
    const spec = kit.spec('raced');

    const results = await Promise.allSettled(replicas.map(({ jsm }) => ensureDurableConsumer(jsm, spec)));

    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect((await kit.nats().jsm.consumers.info(STREAM, 'raced')).config.max_deliver).toBe(
      spec.maxDeliver + 1,
    );
  });

  it('updates max_deliver, ack_wait and max_ack_pending of an existing consumer in place', async () => {
    const { jsm } = kit.nats();
    await ensureDurableConsumer(jsm, kit.spec('tuned', 3));
    const created = (await jsm.consumers.info(STREAM, 'tuned')).created;

    await ensureDurableConsumer(jsm, { ...kit.spec('tuned', 7), ackWaitMs: 9_000, maxAckPending: 50 });

    const info = await jsm.consumers.info(STREAM, 'tuned');
    expect(info.created).toBe(created);
    expect(info.config).toMatchObject({ max_deliver: 8, ack_wait: nanos(9_000), max_ack_pending: 50 });
  });
});
