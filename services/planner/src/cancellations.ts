import type { JetStreamClient } from '@nats-io/jetstream';
import { BUCKETS } from '@dura/contracts';
import { openKvBucket, openOnce, whileBucketSettles } from '@dura/event-store';

/** Marks cancelled runs in the `dura_cancellations` bucket, which every gateway watches. */
export interface Cancellations {
  mark(runId: string, reason: string): Promise<void>;
}

/**
 * The bucket is created on first use (history 1, file storage), or bound when a gateway created it first.
 * A gateway checks it before starting any effect and aborts the calls of a run the moment it is marked.
 */
export function createCancellations(deps: { js: JetStreamClient; replicas?: number }): Cancellations {
  const open = openOnce(() =>
    openKvBucket(deps.js, BUCKETS.cancellations, {
      replicas: deps.replicas,
      description: 'Dura cancelled runs: runId -> {reason, ts}; gateways abort in-flight calls',
    }),
  );
  return {
    async mark(runId, reason) {
      const kv = await open();
      const existing = await kv.get(runId);
      if (existing?.operation === 'PUT') return;
      await whileBucketSettles(() => kv.put(runId, JSON.stringify({ reason, ts: new Date().toISOString() })));
    },
  };
}
