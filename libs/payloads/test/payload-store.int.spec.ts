import { StorageType } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { BUCKETS, payloadUri, type JsonValue } from '@dura/contracts';
import { createPayloadResolver, createPayloadStore, encodeJsonPayload, sha256Hex } from '../src/index';
import { useBucketConnections, useTestInfra } from './infra';

const infra = useTestInfra({ database: false });
const open = useBucketConnections(infra);

let buckets = 0;
/** Each test gets its own bucket, so tests do not see each other's objects. */
function freshBucket(): string {
  buckets += 1;
  return `payloads_test_${buckets}`;
}

const MIB = 1024 * 1024;

/** A tool result of a little over 2 MiB of JSON. */
function largeValue(): JsonValue {
  const rows = Array.from({ length: 21_000 }, (_, i) => ({
    id: i,
    line: `row ${i} ${'x'.repeat(80)}`,
    ok: true,
  }));
  return { tool: 'search.logs', rows };
}

/** Messages in the bucket's stream: one per chunk of each live object plus one metadata message per object. */
async function streamMessages(raw: { status(): Promise<{ streamInfo: { state: { messages: number } } }> }) {
  return (await raw.status()).streamInfo.state.messages;
}

describe('PayloadStore on JetStream', () => {
  it('creates the dura_payloads bucket (file storage) on first use', async () => {
    const { nc, rawBucket } = await open();
    const store = createPayloadStore({ nc });
    expect(store.bucket).toBe(BUCKETS.payloads);

    const ref = await store.putJson({ hello: 'world' });

    expect(ref.uri).toBe(payloadUri(BUCKETS.payloads, ref.sha256));
    const status = await (await rawBucket(BUCKETS.payloads)).status();
    expect(status).toMatchObject({ storage: StorageType.File, replicas: 1 });
    expect(await store.getJson(ref)).toEqual({ hello: 'world' });
  });

  it('round-trips a 2 MiB JSON value, stored under the sha256 of its canonical JSON', async () => {
    const { js, rawBucket } = await open();
    const store = createPayloadStore({ js, bucket: freshBucket() });
    const value = largeValue();
    const bytes = encodeJsonPayload(value);
    expect(bytes.byteLength).toBeGreaterThan(2 * MIB);

    const ref = await store.putJson(value);

    expect(ref).toEqual({
      uri: payloadUri(store.bucket, sha256Hex(bytes)),
      sha256: sha256Hex(bytes),
      size: bytes.byteLength,
    });
    const info = await (await rawBucket(store.bucket)).info(ref.sha256);
    expect(info).toMatchObject({ size: bytes.byteLength, deleted: false });
    expect(info!.chunks).toBeGreaterThan(1);
    expect(await store.getJson(ref)).toEqual(value);
    // Compared by hash: a byte-by-byte deep equal of 2 MiB takes seconds.
    expect(sha256Hex(await store.get(ref))).toBe(sha256Hex(bytes));
  });

  it('stores the same content once: a second put, even of reordered keys, uploads nothing', async () => {
    const { js, rawBucket } = await open();
    const store = createPayloadStore({ js, bucket: freshBucket() });
    const raw = await rawBucket(store.bucket).catch(() => undefined);
    expect(raw).toBeUndefined(); // the store has not created its bucket yet

    const first = await store.putJson({ a: 'x'.repeat(300_000), b: [1, 2, 3] });
    const bucket = await rawBucket(store.bucket);
    const before = await bucket.info(first.sha256);
    const messagesBefore = await streamMessages(bucket);

    const second = await store.putJson({ b: [1, 2, 3], a: 'x'.repeat(300_000) });

    expect(second).toEqual(first);
    const after = await bucket.info(first.sha256);
    expect(after!.revision).toBe(before!.revision);
    expect(after!.nuid).toBe(before!.nuid);
    expect(await streamMessages(bucket)).toBe(messagesBefore);
    expect(messagesBefore).toBe(before!.chunks + 1);
  });

  it('refuses an object overwritten with other bytes of the same size as payload_corrupt, naming both hashes', async () => {
    const { js, rawBucket } = await open();
    const store = createPayloadStore({ js, bucket: freshBucket() });
    const original = encodeJsonPayload({ invoice: 'INV-1', total: 1200 });
    const ref = await store.put(original);
    const tampered = original.slice();
    tampered[tampered.length - 3] = '9'.charCodeAt(0);
    await (await rawBucket(store.bucket)).putBlob({ name: ref.sha256 }, tampered);

    const error = await store.get(ref).then(
      () => undefined,
      (err: unknown) => err,
    );

    expect(error).toMatchObject({ code: 'payload_corrupt', retryable: false });
    const message = (error as Error).message;
    expect(message).toContain(ref.uri);
    expect(message).toContain(ref.sha256);
    expect(message).toContain(sha256Hex(tampered));
    await expect(store.getJson(ref)).rejects.toMatchObject({ code: 'payload_corrupt' });
  });

  it('refuses an object overwritten with bytes of another size, and a put of the original repairs it', async () => {
    const { js, rawBucket } = await open();
    const store = createPayloadStore({ js, bucket: freshBucket() });
    const value = { report: 'y'.repeat(200_000) };
    const ref = await store.putJson(value);
    const raw = await rawBucket(store.bucket);
    const shorter = encodeJsonPayload({ report: 'short' });
    await raw.putBlob({ name: ref.sha256 }, shorter);

    await expect(store.getJson(ref)).rejects.toMatchObject({
      code: 'payload_corrupt',
      message: expect.stringContaining(sha256Hex(shorter)),
    });

    expect(await store.putJson(value)).toEqual(ref);
    expect(await store.getJson(ref)).toEqual(value);
    // The repair replaced the bad copy: only the new object's chunks and one metadata message remain.
    expect(await streamMessages(raw)).toBe((await raw.info(ref.sha256))!.chunks + 1);
  });

  it('reports an object that was never stored, or was deleted, as payload_missing', async () => {
    const { js, rawBucket } = await open();
    const store = createPayloadStore({ js, bucket: freshBucket() });
    const stored = await store.putJson({ kept: false });
    const neverStored = encodeJsonPayload({ never: 'stored' });
    const missing = {
      uri: payloadUri(store.bucket, sha256Hex(neverStored)),
      sha256: sha256Hex(neverStored),
      size: 18,
    };

    await expect(store.get(missing)).rejects.toMatchObject({
      code: 'payload_missing',
      message: expect.stringContaining(missing.uri),
    });
    await (await rawBucket(store.bucket)).delete(stored.sha256);
    await expect(store.getJson(stored)).rejects.toMatchObject({ code: 'payload_missing', retryable: false });
  });

  it('refuses a reference into another bucket, saying which bucket to read', async () => {
    const { js } = await open();
    const store = createPayloadStore({ js, bucket: freshBucket() });
    const ref = await store.putJson({ where: 'here' });
    const elsewhere = { ...ref, uri: payloadUri('other_bucket', ref.sha256) };

    await expect(store.get(elsewhere)).rejects.toMatchObject({
      code: 'payload_wrong_bucket',
      message: expect.stringContaining('"other_bucket"'),
    });
  });

  it('lets two processes put the same bytes at once into a bucket neither has created: both succeed, one copy stays', async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const bucket = freshBucket();
    const storeA = createPayloadStore({ js: a.js, bucket });
    const storeB = createPayloadStore({ nc: b.nc, bucket });
    const bytes = encodeJsonPayload({ page: 'z'.repeat(MIB) });

    const [refA, refB] = await Promise.all([storeA.put(bytes), storeB.put(bytes)]);

    expect(refA).toEqual(refB);
    expect(sha256Hex(await storeB.get(refA))).toBe(refA.sha256);
    const raw = await a.rawBucket(bucket);
    // No orphaned chunks from the losing upload.
    expect(await streamMessages(raw)).toBe((await raw.info(refA.sha256))!.chunks + 1);
  });

  it('refuses to decode intact bytes that are not JSON as payload_not_json', async () => {
    const { js } = await open();
    const store = createPayloadStore({ js, bucket: freshBucket() });
    const ref = await store.put(new Uint8Array([0xff, 0x00, 0x01]));

    expect(await store.get(ref)).toEqual(new Uint8Array([0xff, 0x00, 0x01]));
    await expect(store.getJson(ref)).rejects.toMatchObject({ code: 'payload_not_json' });
  });
});

describe('PayloadResolver on JetStream', () => {
  it('resolves a reference once and serves it from memory, even after the object is gone', async () => {
    const { js, rawBucket } = await open();
    const store = createPayloadStore({ js, bucket: freshBucket() });
    const value = largeValue();
    const ref = await store.putJson(value);
    const resolver = createPayloadResolver(store, { cacheEntries: 4 });

    expect(await resolver.resolve(ref)).toEqual(value);
    await (await rawBucket(store.bucket)).delete(ref.sha256);

    expect(await resolver.resolve(ref)).toEqual(value);
    await expect(createPayloadResolver(store).resolve(ref)).rejects.toMatchObject({
      code: 'payload_missing',
    });
  });
});
