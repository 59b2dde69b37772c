import type { JetStreamClient } from '@nats-io/jetstream';
import { openOnce } from './kv-bucket';

/**
 * Lists the keys of a KV bucket with one stream-info request (the stream's subjects), not a key lister.
 * nats.js `kv.keys()` reads the bucket through a consumer and stops when the server reports nothing pending;
 * nats-server 2.9 can keep reporting one message pending when a key is overwritten while the consumer starts
 * (the message it began at is gone), and the listing then waits until the bucket has been quiet for 5 s:
 * for a bucket written every second, forever.
 *
 * A deleted key stays listed while its delete marker is in the bucket: callers read each key and skip those.
 */
export function bucketKeyLister(js: JetStreamClient, bucket: string): () => Promise<string[]> {
  const manager = openOnce(() => js.jetstreamManager(false));
  const prefix = `$KV.${bucket}.`;
  return async () => {
    const info = await (await manager()).streams.info(`KV_${bucket}`, { subjects_filter: `${prefix}>` });
    // Every subject returned is under the filter, so under the prefix.
    return Object.keys(info.state.subjects ?? {})
      .map((subject) => subject.slice(prefix.length))
      .sort();
  };
}
