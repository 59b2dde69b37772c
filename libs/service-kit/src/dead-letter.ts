import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { DEAD_LETTER_VERSION, deadLetterSubject, type DeadLetter } from '@dura/contracts';

export interface DeadLetterInput {
  source: string;
  subject: string;
  data: Uint8Array;
  error: { code: string; message: string };
  issues?: string[];
  streamSeq?: number;
  deliveries?: number;
  runId?: string;
  now: Date;
}

/** Builds the dead-letter record: original bytes kept verbatim (utf8 when they decode, else base64). */
export function buildDeadLetter(input: DeadLetterInput): DeadLetter {
  let payload: string;
  let payloadEncoding: DeadLetter['payloadEncoding'] = 'utf8';
  try {
    payload = new TextDecoder('utf-8', { fatal: true }).decode(input.data);
  } catch {
    payload = Buffer.from(input.data).toString('base64');
    payloadEncoding = 'base64';
  }
  return {
    v: DEAD_LETTER_VERSION,
    source: input.source,
    subject: input.subject,
    ...(input.streamSeq === undefined ? {} : { streamSeq: input.streamSeq }),
    ...(input.deliveries === undefined ? {} : { deliveries: input.deliveries }),
    error: input.error,
    ...(input.issues === undefined ? {} : { issues: input.issues }),
    payload,
    payloadEncoding,
    ...(input.runId === undefined ? {} : { runId: input.runId }),
    at: input.now.toISOString(),
  };
}

/** Publishes to `dura.dlq.<source>`; the msg-id makes a retried dead-lettering of the same message a no-op. */
export async function publishDeadLetter(js: JetStreamClient, letter: DeadLetter): Promise<void> {
  const id = `dlq:${letter.source}:${letter.streamSeq ?? letter.at}`;
  await js.publish(deadLetterSubject(letter.source), JSON.stringify(letter), { msgID: id });
}

export function deadLetterFromMsg(
  msg: JsMsg,
  source: string,
  error: { code: string; message: string },
  extra: { issues?: string[]; runId?: string; now: Date },
): DeadLetter {
  return buildDeadLetter({
    source,
    subject: msg.subject,
    data: msg.data,
    error,
    streamSeq: msg.seq,
    deliveries: msg.info.deliveryCount,
    ...extra,
  });
}
