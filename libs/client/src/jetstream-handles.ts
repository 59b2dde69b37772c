import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';

/** The JetStream client and manager the SDK's NATS calls go through. */
export interface JetStreamHandles {
  js: JetStreamClient;
  jsm: JetStreamManager;
}
