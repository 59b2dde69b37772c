import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AckPolicy, DeliverPolicy, RetentionPolicy, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { afterAll, describe, expect, it } from 'vitest';
import { createRewindGuard } from '../src/consumer-rewind';
import { startConsumerLoop, type ConsumerLoop, type DurableConsumerSpec } from '../src/index';
import { eventually, recordingLogger, useNatsConnections, useTestInfra } from './infra';

// nats-server 2.9 can come back from a full disk with a stream's block cut short: the stream restarts from an
// earlier sequence while its durable consumers keep the sequence they had delivered, and skip every new message
// up to it. Here the stream's block files are removed while the server is down, which leaves it in that state.
const infra = useTestInfra({ database: false });
const open = useNatsConnections(infra);
const loops: ConsumerLoop[] = [];
afterAll(async () => {
  await Promise.allSettled(loops.map((loop) => loop.stop()));
});

const spec = (stream: string): DurableConsumerSpec => ({
  stream,
  durable: 'worker',
  filterSubject: `${stream.toLowerCase()}.work`,
  maxDeliver: 3,
  ackWaitMs: 7_000,
});

async function createStream(stream: string) {
  const nats = await open({ maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  await nats.jsm.streams.add({
    name: stream,
    subjects: [`${stream.toLowerCase()}.>`],
    retention: RetentionPolicy.Workqueue,
  });
  await nats.jsm.consumers.add(stream, {
    durable_name: 'worker',
    filter_subject: spec(stream).filterSubject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(7_000),
    max_deliver: 4,
  });
  return nats;
}

/** Stops the server, removes what `stream` had stored (its consumers' state stays), and starts the server again. */
async function loseStoredMessages(stream: string) {
  const server = infra().nats;
  await server.stop();
  const found = await readdir(server.storeDir, { recursive: true });
  const msgs = found.filter((path) => path.endsWith(join('streams', stream, 'msgs')));
  expect(msgs).toHaveLength(1);
  const dir = join(server.storeDir, msgs[0]!);
  for (const file of await readdir(dir)) await rm(join(dir, file), { recursive: true });
  await server.restart();
}

describe('a consumer whose stream lost stored messages', () => {
  it('is recreated with its configuration and delivers what is published after', async () => {
    const nats = await createStream('REWOUND');
    const seen: string[] = [];
    const { log, records } = recordingLogger();
    const loop = startConsumerLoop({
      js: nats.js,
      spec: spec('REWOUND'),
      source: 'rewound',
      concurrency: 1,
      log,
      rewindCheckMs: 300,
      handle: (msg: JsMsg) => {
        seen.push(msg.string());
        return Promise.resolve();
      },
    });
    loops.push(loop);
    for (const body of ['a', 'b', 'c', 'd', 'e']) await nats.js.publish('rewound.work', body);
    await eventually(() => expect(seen).toEqual(['a', 'b', 'c', 'd', 'e']));
    await eventually(async () =>
      expect((await nats.jsm.consumers.info('REWOUND', 'worker')).ack_floor.stream_seq).toBe(5),
    );

    await loseStoredMessages('REWOUND');
    // The stream starts over at 1; the consumer stood at 5 (the logged error below says so).
    const ack = await eventually(() => nats.js.publish('rewound.work', 'after'));
    expect(ack.seq).toBe(1);

    await eventually(() => expect(seen).toEqual(['a', 'b', 'c', 'd', 'e', 'after']), 60_000).catch(
      (err: Error) => {
        // What the loop did meanwhile says where it stopped.
        throw new Error(
          `${err.message}\nthe loop's log:\n${records.map((r) => JSON.stringify(r)).join('\n')}`,
        );
      },
    );
    const after = await nats.jsm.consumers.info('REWOUND', 'worker');
    expect(after.config).toMatchObject({
      ack_wait: nanos(7_000),
      max_deliver: 4,
      filter_subject: 'rewound.work',
      deliver_policy: DeliverPolicy.All,
    });
    expect(records).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: expect.stringMatching(/stream REWOUND ends at \d+: the stream lost messages it had stored/),
        delivered: 5,
      }),
    );
  }, 120_000);

  it('is left alone while it is not past its stream', async () => {
    const nats = await createStream('STEADY');
    const { log, records } = recordingLogger();
    const guard = createRewindGuard({ js: nats.js, spec: spec('STEADY'), log });
    await nats.js.publish('steady.work', 'one');
    const consumer = await nats.js.consumers.get('STEADY', 'worker');
    const msg = await consumer.next({ expires: 5_000 });
    await msg!.ackAck();

    expect(await guard.check()).toBeUndefined();
    const info = await nats.jsm.consumers.info('STEADY', 'worker');
    expect(info.delivered.stream_seq).toBe(1);
    expect(records.filter((record) => record['level'] === 'error')).toEqual([]);
  });
});
