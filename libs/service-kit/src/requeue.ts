import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { headers } from '@nats-io/nats-core';

/**
 * Publishes a copy of `msg` with its headers; its msg-id is derived from the original's stream sequence, so a
 * crash between this publish and the ack re-publishes the same id and JetStream drops the duplicate.
 */
export async function requeue(js: JetStreamClient, msg: JsMsg, data: Uint8Array = msg.data): Promise<void> {
  const copy = headers();
  for (const key of msg.headers?.keys() ?? [])
    if (key !== 'Nats-Msg-Id') for (const value of msg.headers?.values(key) ?? []) copy.append(key, value);
  // Whoever derives an identity from the message (a run id from its msg-id or sequence) reads the first one.
  const first = firstPublished(msg);
  if (first.msgId) copy.set(REQUEUED_FROM.msgId, first.msgId);
  copy.set(REQUEUED_FROM.seq, String(first.seq));
  // Named after the first msg-id, not the copy's own, so the id keeps its length however often a message waits.
  await js.publish(msg.subject, data, {
    headers: copy,
    msgID: `${first.msgId ?? msg.subject}~q${msg.seq}`,
  });
}

/** Headers a requeued copy carries: the msg-id and stream sequence of the message as first published. */
export const REQUEUED_FROM = { msgId: 'Dura-Requeued-Msg-Id', seq: 'Dura-Requeued-Seq' } as const;

/** The msg-id and stream sequence `msg` had when it was first published, through any requeues. */
export function firstPublished(msg: JsMsg): { msgId: string | undefined; seq: number } {
  const copiedFrom = msg.headers?.get(REQUEUED_FROM.seq);
  const seq = Number(copiedFrom || msg.seq);
  // A copy's own msg-id is the requeue's; a message first published without one has none to pass on.
  const msgId = copiedFrom ? msg.headers?.get(REQUEUED_FROM.msgId) : msg.headers?.get('Nats-Msg-Id');
  return { msgId: msgId || undefined, seq: Number.isSafeInteger(seq) && seq > 0 ? seq : msg.seq };
}
