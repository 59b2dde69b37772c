import type { RunReader, RunWakeups } from '@dura/event-store';
import type { JetStreamHandles } from './jetstream-handles';
import type * as NatsSide from './nats-side';

/** The NATS handles, the run log's and token feed's readers, and the client's NATS side (nats-side.ts). */
export type NatsReads = JetStreamHandles & {
  reader: RunReader;
  wakeups: RunWakeups;
  tokens: { reader: RunReader; wakeups: RunWakeups };
  side: typeof NatsSide;
};
