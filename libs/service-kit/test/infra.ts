import { retryUntil as eventually } from '@dura/testing';
export { eventually };
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { afterAll } from 'vitest';
import { DeadLetterSchema, deadLetterSubject, STREAMS, type DeadLetter } from '@dura/contracts';
import { useTestInfra, type TestInfra } from '@dura/testing';
import { createLogger, type Logger } from '../src/index';

export { useTestInfra };

export interface NatsHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/** Opens connections to the spec file's server; every one is closed in afterAll, whether or not the tests passed. */
export function useNatsConnections(infra: () => TestInfra): () => Promise<NatsHandles> {
  const open: NatsConnection[] = [];
  afterAll(async () => {
    await Promise.allSettled(open.map((nc) => nc.close()));
  });
  return async () => {
    const nc = await connect({ servers: infra().nats.url });
    open.push(nc);
    return { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
  };
}

/** A logger that keeps its records, so tests can assert on what a component reported. */
export function recordingLogger(): { log: Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const log = createLogger({
    service: 'test',
    level: 'debug',
    write: (line) => records.push(JSON.parse(line) as Record<string, unknown>),
  });
  return { log, records };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The dead letters stored for `source`, oldest first, validated against the wire contract. */
export async function deadLetters(jsm: JetStreamManager, source: string): Promise<DeadLetter[]> {
  const { state } = await jsm.streams.info(STREAMS.deadLetters);
  const out: DeadLetter[] = [];
  for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq += 1) {
    const msg = await jsm.streams.getMessage(STREAMS.deadLetters, { seq });
    if (msg?.subject === deadLetterSubject(source)) out.push(DeadLetterSchema.parse(msg.json()));
  }
  return out;
}
