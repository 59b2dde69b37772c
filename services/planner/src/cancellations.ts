import { StorageType, type JetStreamClient } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { BUCKETS } from '@dura/contracts';
import { whileBucketSettles } from '@dura/event-store';

/** Marks cancelled runs in the `dura_cancellations` bucket, which every gateway watches. */
export interface Cancellations {
  mark(runId: string, reason: string): Promise<void>;
}

/**
 * The bucket is created on first use (history 1, file storage), or bound when a gateway created it first.
 * A gateway checks it before starting any effect and aborts the calls of a run the moment it is marked.
 */
export function createCancellations(deps: { js: JetStreamClient; replicas?: number }): Cancellations {
  let bucket: Promise<KV> | undefined;
  function open(): Promise<KV> {
    bucket ??= new Kvm(deps.js)
      .create(BUCKETS.cancellations, {
        history: 1,
        storage: StorageType.File,
        replicas: deps.replicas ?? 1,
        description: 'Dura cancelled runs: runId -> {reason, ts}; gateways abort in-flight calls',
      })
      .catch((err: unknown) => {
        bucket = undefined;
        throw err;
      });
    return bucket;
  }
  return {
    async mark(runId, reason) {
      const kv = await open();
      const existing = await kv.get(runId);
      if (existing?.operation === 'PUT') return;
      await whileBucketSettles(() => kv.put(runId, JSON.stringify({ reason, ts: new Date().toISOString() })));
    },
  };
}
