import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { DEAD_LETTER_VERSION, deadLetterSubject, storableReason, type DeadLetter } from '@dura/contracts';

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

/**
 * Bytes of the refused message a dead letter keeps. A message may be as large as the server's max_payload
 * (1 MiB by default), and its letter escapes it again (a quote becomes two bytes, a control character six):
 * a letter holding all of it could not be published, and the message would be redelivered forever.
 */
export const DEAD_LETTER_PAYLOAD_LIMIT = 64 * 1024;
const MAX_ISSUES = 100;
const MAX_TEXT = 2_000;

/**
 * Builds the dead-letter record: original bytes kept verbatim (utf8 when they decode, else base64), up to
 * `DEAD_LETTER_PAYLOAD_LIMIT` bytes; a longer message keeps its beginning, marked `truncated` with its size.
 */
export function buildDeadLetter(input: DeadLetterInput): DeadLetter {
  const truncated = input.data.length > DEAD_LETTER_PAYLOAD_LIMIT;
  const kept = truncated ? input.data.subarray(0, DEAD_LETTER_PAYLOAD_LIMIT) : input.data;
  let payload: string;
  let payloadEncoding: DeadLetter['payloadEncoding'] = 'utf8';
  try {
    new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(input.data);
    // `stream` holds back a character cut in half at the limit instead of mangling it.
    payload = new TextDecoder('utf-8', { ignoreBOM: true }).decode(kept, { stream: truncated });
  } catch {
    payload = Buffer.from(kept).toString('base64');
    payloadEncoding = 'base64';
  }
  const issues = input.issues?.slice(0, MAX_ISSUES).map((issue) => clip(issue, MAX_TEXT));
  if (issues && input.issues && input.issues.length > MAX_ISSUES)
    issues.push(`... and ${input.issues.length - MAX_ISSUES} more issues`);
  return {
    v: DEAD_LETTER_VERSION,
    source: input.source,
    subject: input.subject,
    ...(input.streamSeq === undefined ? {} : { streamSeq: input.streamSeq }),
    ...(input.deliveries === undefined ? {} : { deliveries: input.deliveries }),
    error: { code: clip(input.error.code, 200), message: clip(input.error.message, MAX_TEXT) },
    ...(issues === undefined ? {} : { issues }),
    payload,
    payloadEncoding,
    ...(truncated ? { payloadBytes: input.data.length, truncated } : {}),
    ...(input.runId === undefined ? {} : { runId: input.runId }),
    at: input.now.toISOString(),
  };
}

/** Reasons may quote the refused message: cut without splitting a character, and free of what no store keeps. */
function clip(text: string, max: number): string {
  return storableReason(text, max);
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
