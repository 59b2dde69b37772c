import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { STREAMS, SUBJECTS } from '@dura/contracts';
import { EVENT_TYPE_HEADER } from '@dura/event-store';

/** One stored event as the stream saw it: its store time is the server's, the same clock for every event. */
export interface StoredEvent {
  seq: number;
  runId: string;
  type: string;
  /** Server store time, ms (fractional). */
  at: number;
  callId: string | undefined;
}

const decoder = new TextDecoder();

/** Last sequence of the runs stream (0 when empty). */
export async function lastRunSeq(jsm: JetStreamManager): Promise<number> {
  return (await jsm.streams.info(STREAMS.runs)).state.last_seq;
}

/** Every run event stored after `afterSeq`, read through one short-lived pull consumer. */
export async function readStoredEvents(
  js: JetStreamClient,
  jsm: JetStreamManager,
  afterSeq: number,
): Promise<StoredEvent[]> {
  const info = await jsm.consumers.add(STREAMS.runs, {
    filter_subject: SUBJECTS.allRuns,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: afterSeq + 1,
    ack_policy: AckPolicy.None,
    inactive_threshold: nanos(60_000),
    mem_storage: true,
  });
  const out: StoredEvent[] = [];
  try {
    const consumer = js.consumers.getConsumerFromInfo(info);
    while (out.length < info.num_pending) {
      const batch = await consumer.fetch({
        max_messages: Math.min(2000, info.num_pending - out.length),
        expires: 5000,
      });
      let got = 0;
      for await (const msg of batch as AsyncIterable<JsMsg>) {
        out.push(toStored(msg));
        got += 1;
      }
      if (got === 0) break;
    }
  } finally {
    await jsm.consumers.delete(STREAMS.runs, info.name).catch(() => undefined);
  }
  return out;
}

function toStored(msg: JsMsg): StoredEvent {
  let type = msg.headers?.get(EVENT_TYPE_HEADER) ?? '';
  let callId: string | undefined;
  if (type === '' || type.startsWith('tool_call')) {
    const body = JSON.parse(decoder.decode(msg.data)) as { type: string; data?: { callId?: string } };
    type = body.type;
    callId = body.data?.callId;
  }
  return {
    seq: msg.seq,
    runId: msg.subject.slice(SUBJECTS.runPrefix.length + 1),
    type,
    at: Number(msg.info.timestampNanos) / 1e6,
    callId,
  };
}
