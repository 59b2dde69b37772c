import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { BUCKETS } from '@dura/contracts';
import { openKvBucket, openOnce } from '@dura/event-store';

/** Where run snapshots live: one key per run id, only the latest kept. A cache; the log wins. */
export interface SnapshotStore {
  /** The stored bytes of the run's snapshot, or undefined when it has none. */
  get(runId: string): Promise<Uint8Array | undefined>;
  put(runId: string, bytes: Uint8Array): Promise<void>;
}

export interface SnapshotBucketOptions {
  /** R1 on a single server; the same as the streams (DURA_STREAM_REPLICAS) in a cluster. */
  replicas?: number;
}

/** Creates the `dura_snapshots` bucket (file storage, history 1), or binds to it when it exists. */
export function openSnapshotBucket(js: JetStreamClient, options: SnapshotBucketOptions = {}): Promise<KV> {
  return openKvBucket(js, BUCKETS.snapshots, {
    replicas: options.replicas,
    description: 'Dura run snapshots: runId -> folded state at a sequence (a cache of the log)',
  });
}

/** A snapshot store over the KV bucket; the bucket is created on first use, and again after a failed attempt. */
export function createSnapshotStore(deps: { js: JetStreamClient } & SnapshotBucketOptions): SnapshotStore {
  const open = openOnce(() => openSnapshotBucket(deps.js, deps));

  return {
    async get(runId) {
      const entry = await (await open()).get(runId);
      return entry === null || entry.operation !== 'PUT' ? undefined : entry.value;
    },
    async put(runId, bytes) {
      await (await open()).put(runId, bytes);
    },
  };
}
