import type { JetStreamClient, StoredMsg } from '@nats-io/jetstream';
import { isJsApiError, JS_CODES } from './jetstream-errors';
import { getKvMessage, openOnce } from './kv-bucket';

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

/**
 * Every entry of KV bucket `bucket` that holds a value, of the keys `wanted` accepts, read without a consumer
 * and without the right to create the bucket: keys by stream info, values by message get. Undefined while no
 * service has created the bucket yet.
 */
export async function readKvMessages(
  js: JetStreamClient,
  bucket: string,
  wanted: (key: string) => boolean = () => true,
): Promise<{ key: string; msg: StoredMsg }[] | undefined> {
  let keys: string[];
  try {
    keys = await bucketKeyLister(js, bucket)();
  } catch (err) {
    if (isJsApiError(err, JS_CODES.streamNotFound)) return undefined;
    throw err;
  }
  const jsm = await js.jetstreamManager(false);
  const read = await Promise.all(
    keys.filter(wanted).map(async (key) => ({ key, msg: await getKvMessage(jsm, bucket, key) })),
  );
  return read.filter((entry): entry is { key: string; msg: StoredMsg } => entry.msg !== undefined);
}
