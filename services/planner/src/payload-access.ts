import type { JetStreamClient } from '@nats-io/jetstream';
import {
  createPayloadResolver,
  createPayloadStore,
  DEFAULT_PAYLOAD_THRESHOLD_BYTES,
  offloadIfLarge,
} from '@dura/payloads';
import { DuraError, type JsonValue } from '@dura/contracts';
import type { RunState } from '@dura/core';
import type { PayloadAccess } from './agents/agent-model';

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

/**
 * The state with offloaded results fetched back in (hash-checked), for readers that need the values
 * themselves, such as plan references (`$steps.2.report`). Returns `state` itself when nothing is offloaded.
 */
export async function withResolvedResults(
  state: RunState,
  payloads: PayloadAccess | undefined,
): Promise<RunState> {
  if (!state.calls.some((call) => call.resultRef)) return state;
  if (!payloads)
    throw new DuraError(
      'payloads_unavailable',
      'a tool result is in the object store but this planner cannot read it',
    );
  const calls = await Promise.all(
    state.calls.map(async (call) =>
      call.resultRef
        ? { ...call, result: JSON.parse(await payloads.resolveText(call.resultRef)) as JsonValue }
        : call,
    ),
  );
  return { ...state, calls };
}
