import { retryUntil as eventually } from '@dura/testing';
export { eventually };
import type { JetStreamManager } from '@nats-io/jetstream';
import { DeadLetterSchema, deadLetterSubject, STREAMS, type DeadLetter } from '@dura/contracts';
import { useNatsConnections, useTestInfra, type TestNatsHandles } from '@dura/testing';
import { createLogger, type Logger } from '../src/index';

export { useNatsConnections, useTestInfra };
export type NatsHandles = TestNatsHandles;

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
