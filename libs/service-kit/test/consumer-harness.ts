import type { JsMsg } from '@nats-io/jetstream';
import { afterAll, beforeAll } from 'vitest';
import { ensureStreams } from '@dura/event-store';
import type { TestInfra } from '@dura/testing';
import {
  ensureDurableConsumer,
  startConsumerLoop,
  type ConsumerLoop,
  type ConsumerLoopOptions,
  type DurableConsumerSpec,
} from '../src/index';
import { recordingLogger, useNatsConnections, type NatsHandles } from './infra';

export const STREAM = 'KIT';

export interface LoopOptions {
  concurrency?: number;
  maxDeliver?: number;
  runIdOf?: (msg: JsMsg) => string | undefined;
  redact?: ConsumerLoopOptions['redact'];
}

/**
 * A stream `KIT` (subjects `kit.>`) next to Dura's streams, and consumer loops named after each test: loop `name`
 * reads `kit.<name>` through durable `name` and dead-letters to `dura.dlq.<name>`. Loops are stopped in afterAll.
 */
export function useConsumerHarness(infra: () => TestInfra) {
  const open = useNatsConnections(infra);
  const loops: ConsumerLoop[] = [];
  let nats: NatsHandles;

  beforeAll(async () => {
    nats = await open();
    await ensureStreams(nats.jsm);
    await nats.jsm.streams.add({ name: STREAM, subjects: ['kit.>'] });
  });
  afterAll(async () => {
    await Promise.allSettled(loops.map((loop) => loop.stop()));
  });

  const spec = (name: string, maxDeliver = 3): DurableConsumerSpec => ({
    stream: STREAM,
    durable: name,
    filterSubject: `kit.${name}`,
    maxDeliver,
    ackWaitMs: 5_000,
  });

  return {
    nats: () => nats,
    spec,
    /** Creates the durable consumer and starts a loop on it. */
    async start(name: string, handle: (msg: JsMsg) => void | Promise<void>, options: LoopOptions = {}) {
      const { log, records } = recordingLogger();
      const loopSpec = spec(name, options.maxDeliver);
      await ensureDurableConsumer(nats.jsm, loopSpec);
      const loop = startConsumerLoop({
        js: nats.js,
        spec: loopSpec,
        source: name,
        concurrency: options.concurrency ?? 1,
        log,
        handle: async (msg) => {
          await handle(msg);
        },
        ...(options.runIdOf ? { runIdOf: options.runIdOf } : {}),
        ...(options.redact ? { redact: options.redact } : {}),
      });
      loops.push(loop);
      return { loop, records };
    },
    /** Publishes `payloads` in order to `kit.<name>`; returns their stream sequences. */
    async publish(name: string, ...payloads: string[]): Promise<number[]> {
      const seqs: number[] = [];
      for (const payload of payloads) seqs.push((await nats.js.publish(`kit.${name}`, payload)).seq);
      return seqs;
    },
    /** Resolves once every message of `name` was acked or terminated. */
    async settled(name: string) {
      const info = await nats.jsm.consumers.info(STREAM, name);
      if (info.num_pending > 0 || info.num_ack_pending > 0) {
        throw new Error(`${name}: ${info.num_pending} pending, ${info.num_ack_pending} awaiting ack`);
      }
      return info;
    },
  };
}
