import { createHash } from 'node:crypto';
import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { Objm, StorageType, type ObjectInfo, type ObjectStore, type ObjectStoreOptions } from '@nats-io/obj';
import { BUCKETS, payloadUri, type JsonValue, type PayloadRef } from '@dura/contracts';
import { whileBucketSettles } from '@dura/event-store';
import { PayloadCorrupt, PayloadMissing, PayloadRefInvalid, PayloadUnavailable } from './errors';
import { checkPayloadRef, encodeJsonPayload } from './payload-ref';
import { digestHex, readObject } from './read-object';

/** Content-addressed storage for values too large for an event: the object name is the sha256 of its bytes. */
export interface PayloadStore {
  readonly bucket: string;
  /** Stores the bytes under their sha256 unless an intact copy is already there; safe to call concurrently. */
  put(bytes: Uint8Array): Promise<PayloadRef>;
  /** Stores the canonical JSON of `value` (equal values, whatever their key order, share one object). */
  putJson(value: JsonValue): Promise<PayloadRef>;
  /** The referenced bytes, checked against the reference's size and sha256 before they are returned. */
  get(ref: PayloadRef): Promise<Uint8Array>;
  /** The referenced value, checked like `get`. */
  getJson(ref: PayloadRef): Promise<JsonValue>;
}

export type PayloadStoreOptions = ({ js: JetStreamClient } | { nc: NatsConnection }) & {
  /** Default `dura_payloads`. */
  bucket?: string;
  /** R1 on a single server; the same as the streams in a cluster. Only applies when this call creates the bucket. */
  replicas?: number;
  /** Upper bound on the bucket's bytes; a full bucket rejects new payloads (it never drops stored ones). */
  maxBytes?: number;
  /** A read that receives no data for this long fails as `payload_unavailable`. Default 15 s. */
  readIdleTimeoutMs?: number;
};

const DEFAULT_READ_IDLE_TIMEOUT_MS = 15_000;
const decoder = new TextDecoder('utf-8', { fatal: true });

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function intact(info: ObjectInfo | null, sha256: string, size: number): boolean {
  return info !== null && !info.deleted && info.size === size && digestHex(info) === sha256;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Opens the payload bucket, creating it (file storage) on first use; the bucket is created at most once per store. */
export function createPayloadStore(options: PayloadStoreOptions): PayloadStore {
  const bucket = options.bucket ?? BUCKETS.payloads;
  const client = 'js' in options ? options.js : options.nc;
  const readIdleTimeoutMs = options.readIdleTimeoutMs ?? DEFAULT_READ_IDLE_TIMEOUT_MS;
  let opened: Promise<ObjectStore> | undefined;

  function open(): Promise<ObjectStore> {
    opened ??= openBucket(new Objm(client), bucket, options).catch((err: unknown) => {
      opened = undefined;
      throw err;
    });
    return opened;
  }

  async function put(bytes: Uint8Array): Promise<PayloadRef> {
    const sha256 = sha256Hex(bytes);
    const ref = { uri: payloadUri(bucket, sha256), sha256, size: bytes.byteLength };
    const store = await open();
    const existing = await store.info(sha256).catch((err: unknown) => {
      throw new PayloadUnavailable(`cannot look up payload ${ref.uri}: ${messageOf(err)}; retry later`, err);
    });
    if (intact(existing, sha256, ref.size)) return ref;
    try {
      // The expected revision makes a concurrent writer of the same bytes lose cleanly (its chunks are purged)
      // instead of replacing, and purging the chunks of, an object another process may be reading. A put
      // nobody answered (a bucket another process is creating at that moment) purged what it sent: it is sent
      // again.
      await whileBucketSettles(() =>
        store.putBlob({ name: sha256 }, bytes, { previousRevision: existing?.revision ?? 0 }),
      );
      return ref;
    } catch (err) {
      const lostRace =
        err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence;
      if (lostRace && intact(await store.info(sha256).catch(() => null), sha256, ref.size)) return ref;
      throw new PayloadUnavailable(
        `cannot store payload ${ref.uri} (${ref.size} bytes) in bucket "${bucket}": ${messageOf(err)}; ` +
          'retry later, and check the bucket has room (max bytes) if this persists',
        err,
      );
    }
  }

  async function get(ref: PayloadRef): Promise<Uint8Array> {
    const checked = checkPayloadRef(ref);
    if (checked.bucket !== bucket) {
      throw new PayloadRefInvalid(
        'payload_wrong_bucket',
        `payload ${checked.uri} lives in bucket "${checked.bucket}" but this store reads bucket "${bucket}"; ` +
          `read it with a payload store opened on bucket "${checked.bucket}"`,
      );
    }
    const store = await open();
    const result = await store.get(checked.sha256).catch((err: unknown) => {
      throw new PayloadUnavailable(`cannot read payload ${checked.uri}: ${messageOf(err)}; retry later`, err);
    });
    if (result === null) throw new PayloadMissing(checked.uri, bucket);
    if (result.info.size !== checked.size) {
      await result.data.cancel();
      throw new PayloadCorrupt(checked.uri, checked, {
        sha256: digestHex(result.info),
        size: result.info.size,
      });
    }
    const bytes = await readObject(result, checked, readIdleTimeoutMs);
    const actual = { sha256: sha256Hex(bytes), size: bytes.byteLength };
    if (actual.size !== checked.size || actual.sha256 !== checked.sha256) {
      throw new PayloadCorrupt(checked.uri, checked, actual);
    }
    return bytes;
  }

  return {
    bucket,
    put,
    putJson: (value) => put(encodeJsonPayload(value)),
    get,
    async getJson(ref) {
      const bytes = await get(ref);
      try {
        return JSON.parse(decoder.decode(bytes)) as JsonValue;
      } catch (err) {
        throw new PayloadRefInvalid(
          'payload_not_json',
          `payload ${ref.uri} is intact but is not UTF-8 JSON (${messageOf(err)}); read it with get() instead`,
        );
      }
    },
  };
}

async function openBucket(objm: Objm, bucket: string, options: PayloadStoreOptions): Promise<ObjectStore> {
  const config: Partial<ObjectStoreOptions> = {
    storage: StorageType.File,
    replicas: options.replicas ?? 1,
    description: 'Dura payloads: sha256 -> bytes of values too large for an event',
  };
  if (options.maxBytes !== undefined) config.max_bytes = options.maxBytes;
  try {
    return await objm.create(bucket, config);
  } catch (err) {
    // Another process may have created the bucket between our lookup and our create: bind to theirs.
    const existing = await objm.open(bucket).catch(() => undefined);
    if (existing !== undefined) return existing;
    throw new PayloadUnavailable(
      `cannot create or open payload bucket "${bucket}": ${messageOf(err)}; check that JetStream is enabled`,
      err,
    );
  }
}
