import { AckPolicy, DeliverPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { isJsApiError, JS_CODES } from '@dura/event-store';

export interface DurableConsumerSpec {
  stream: string;
  durable: string;
  filterSubject: string;
  /** Deliveries before a message is dead-lettered. */
  maxDeliver: number;
  ackWaitMs: number;
  maxAckPending?: number;
}

/** Creates the durable pull consumer, or updates it when its settings changed. Safe from every replica. */
export async function ensureDurableConsumer(jsm: JetStreamManager, spec: DurableConsumerSpec): Promise<void> {
  const config = {
    durable_name: spec.durable,
    filter_subject: spec.filterSubject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    // One more than ours, so the server never drops a message we have not dead-lettered yet.
    max_deliver: spec.maxDeliver + 1,
    ack_wait: nanos(spec.ackWaitMs),
    max_ack_pending: spec.maxAckPending ?? 1000,
  };
  try {
    await jsm.consumers.info(spec.stream, spec.durable);
    await jsm.consumers.update(spec.stream, spec.durable, {
      max_deliver: config.max_deliver,
      ack_wait: config.ack_wait,
      max_ack_pending: config.max_ack_pending,
    });
  } catch (err) {
    if (!isJsApiError(err, JS_CODES.consumerNotFound)) throw err;
    await jsm.consumers.add(spec.stream, config);
  }
}
