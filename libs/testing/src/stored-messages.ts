import type { JetStreamManager, MsgRequest, StoredMsg } from '@nats-io/jetstream';

/** Every stored message of `stream` whose subject matches `subject` (wildcards allowed), in stream order. */
export async function storedMessages(
  jsm: JetStreamManager,
  stream: string,
  subject: string,
): Promise<StoredMsg[]> {
  const out: StoredMsg[] = [];
  for (let seq = 1; ;) {
    // The server (2.9+) answers next_by_subj on the plain msg-get API; nats.js only types it for direct get.
    const query = { seq, next_by_subj: subject } as unknown as MsgRequest;
    const msg = await jsm.streams.getMessage(stream, query);
    if (!msg) return out;
    out.push(msg);
    seq = msg.seq + 1;
  }
}
