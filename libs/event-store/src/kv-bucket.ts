import { StorageType, type JetStreamClient, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream';
import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import { whileBucketSettles } from './bucket-settle';
import { isTimeout, isWrongLastSequence } from './jetstream-errors';

/** How a Dura KV bucket is made: one value per key (history 1), on disk. */
export interface KvBucketOptions {
  /** Replicas of the bucket's stream (1 when unset). */
  replicas?: number | undefined;
  /** How long an entry lives unless written again; unset: for ever. */
  ttl?: number;
  description: string;
}

/** Opens (creating when missing) the KV bucket `name`: history 1, file storage. */
export function openKvBucket(js: JetStreamClient, name: string, options: KvBucketOptions): Promise<KV> {
  const { replicas, ttl, description } = options;
  return new Kvm(js).create(name, {
    history: 1,
    storage: StorageType.File,
    replicas: replicas ?? 1,
    ...(ttl === undefined ? {} : { ttl }),
    description,
  });
}

/**
 * The opener of the KV bucket `name` (`openKvBucket`), made with `settings` on `replicas` replicas (1 when
 * unset): one declaration per bucket.
 */
export function kvBucketOpener(
  name: string,
  settings: Omit<KvBucketOptions, 'replicas'>,
): (js: JetStreamClient, replicas?: number) => Promise<KV> {
  return (js, replicas = 1) => openKvBucket(js, name, { replicas, ...settings });
}

/**
 * `open` made once and shared by every later call; a failed attempt is forgotten, so the next call tries
 * again (a bucket, a JetStream manager).
 */
export function openOnce<T>(open: () => Promise<T>): () => Promise<T> {
  let opened: Promise<T> | undefined;
  return () => {
    opened ??= open().catch((err: unknown) => {
      opened = undefined;
      throw err;
    });
    return opened;
  };
}

/**
 * The record under `key` and the entry's revision (the compare-and-set guard of its next write); undefined
 * when the key is absent or deleted, or holds a record `schema` does not accept (left alone, never
 * overwritten: an operator looks at it).
 */
export async function readKvRecord<T>(
  kv: KV,
  key: string,
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
): Promise<{ record: T; revision: number } | undefined> {
  const entry = await getKvEntry(kv, key);
  if (!entry || entry.operation !== 'PUT' || entry.length === 0) return undefined;
  const parsed = schema.safeParse(entry.json());
  return parsed.success ? { record: parsed.data, revision: entry.revision } : undefined;
}

/**
 * The entry under `key` (a delete marker too), or null when the key was never written. A read was seen to
 * go unanswered on nats-server 2.9 beside a bucket another connection was creating at that moment (its
 * create is answered early; see `whileBucketSettles`): after the client's timeout the read, which changes
 * nothing, is sent once more.
 */
export async function getKvEntry(kv: KV, key: string): Promise<KvEntry | null> {
  try {
    return await kv.get(key);
  } catch (err) {
    if (!isTimeout(err)) throw err;
    return kv.get(key);
  }
}

/**
 * Writes `value` under `key` only if the key holds nothing (never written, or deleted): its revision.
 * Throws JetStream's "wrong last sequence" when the key holds a value. nats.js's own `kv.create` reads the
 * key after any failed write, a write nobody answered too: beside a bucket that is still being created
 * (see `whileBucketSettles`) that read went unanswered as well, and the create failed with a timeout. Here
 * a write nobody answered is sent again, and the key is read only once the bucket has answered.
 */
export async function createKvEntry(kv: KV, key: string, value: string): Promise<number> {
  try {
    return await whileBucketSettles(() => kv.put(key, value, { previousSeq: 0 }));
  } catch (err) {
    if (!isWrongLastSequence(err)) throw err;
    const entry = await getKvEntry(kv, key);
    if (entry?.operation !== 'DEL' && entry?.operation !== 'PURGE') throw err;
    return whileBucketSettles(() => kv.put(key, value, { previousSeq: entry.revision }));
  }
}

/**
 * The entry of `key` in KV bucket `bucket` as the bucket's stream leader has it, by message get (no watcher,
 * and not a direct get a lagging replica may answer); undefined when the key is absent, deleted or purged.
 */
export async function getKvMessage(
  jsm: JetStreamManager,
  bucket: string,
  key: string,
): Promise<StoredMsg | undefined> {
  const msg = await jsm.streams.getMessage(`KV_${bucket}`, { last_by_subj: `$KV.${bucket}.${key}` });
  if (!msg || msg.data.length === 0) return undefined;
  const operation = msg.header?.get('KV-Operation');
  return operation === 'DEL' || operation === 'PURGE' ? undefined : msg;
}
