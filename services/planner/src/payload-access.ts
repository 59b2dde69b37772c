import type { JetStreamClient } from '@nats-io/jetstream';
import {
  createPayloadResolver,
  createPayloadStore,
  DEFAULT_PAYLOAD_THRESHOLD_BYTES,
  offloadIfLarge,
} from '@dura/payloads';
import type { PayloadAccess } from '@dura/agents';

/** The planner's view of the object store: reads offloaded tool results, stores oversized tool arguments. */
export function createPayloadAccess(deps: {
  js: JetStreamClient;
  replicas?: number;
  /** Arguments larger than this go to the object store (default DEFAULT_PAYLOAD_THRESHOLD_BYTES, 64 KiB). */
  thresholdBytes?: number;
}): PayloadAccess {
  const threshold = deps.thresholdBytes ?? DEFAULT_PAYLOAD_THRESHOLD_BYTES;
  const store = createPayloadStore({ js: deps.js, replicas: deps.replicas ?? 1 });
  const resolver = createPayloadResolver(store);
  return {
    async resolveText(ref) {
      return JSON.stringify(await resolver.resolve(ref));
    },
    async offloadArgs(args) {
      const offloaded = await offloadIfLarge(args, threshold, (bytes) => store.put(bytes));
      return 'ref' in offloaded ? offloaded.ref : undefined;
    },
  };
}
