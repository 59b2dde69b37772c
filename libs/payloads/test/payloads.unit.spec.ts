import { describe, expect, it } from 'vitest';
import { payloadUri, type JsonValue, type PayloadRef } from '@dura/contracts';
import {
  DEFAULT_PAYLOAD_THRESHOLD_BYTES,
  checkPayloadRef,
  encodeJsonPayload,
  isPayloadRef,
  offloadIfLarge,
  parsePayloadUri,
} from '../src/index';

const SHA = 'a'.repeat(64);
const ref: PayloadRef = { uri: payloadUri('dura_payloads', SHA), sha256: SHA, size: 10 };

/** A put that records what it was given and returns a reference for it. */
function recordingPut() {
  const calls: Uint8Array[] = [];
  const put = (bytes: Uint8Array) => {
    calls.push(bytes);
    return Promise.resolve({ ...ref, size: bytes.byteLength });
  };
  return { calls, put };
}

/** A JSON string whose JSON text (with its two quotes) is exactly `bytes` UTF-8 bytes. */
function stringOfJsonSize(bytes: number): string {
  return 'x'.repeat(bytes - 2);
}

describe('offloadIfLarge', () => {
  it('keeps a value inline when its JSON is exactly the threshold', async () => {
    const { calls, put } = recordingPut();
    const value = stringOfJsonSize(100);
    expect(await offloadIfLarge(value, 100, put)).toEqual({ inline: value });
    expect(calls).toHaveLength(0);
  });

  it('offloads a value one byte over the threshold, handing put exactly the measured bytes', async () => {
    const { calls, put } = recordingPut();
    const value = stringOfJsonSize(101);
    const result = await offloadIfLarge(value, 100, put);
    expect(result).toEqual({ ref: { ...ref, size: 101 } });
    expect(calls).toHaveLength(1);
    expect(new TextDecoder().decode(calls[0])).toBe(JSON.stringify(value));
  });

  it('measures UTF-8 bytes, not string length', async () => {
    const { calls, put } = recordingPut();
    // 40 characters of 'é' are 80 bytes; with quotes 82 bytes but only 42 UTF-16 code units.
    const value = 'é'.repeat(40);
    expect(await offloadIfLarge(value, 50, put)).toHaveProperty('ref');
    expect(calls[0]!.byteLength).toBe(82);
  });

  it('measures and stores canonical JSON, so key order does not change the bytes', async () => {
    const { calls, put } = recordingPut();
    await offloadIfLarge({ b: 1, a: [true, null] }, 0, put);
    await offloadIfLarge({ a: [true, null], b: 1 }, 0, put);
    expect(new TextDecoder().decode(calls[0])).toBe('{"a":[true,null],"b":1}');
    expect(calls[1]).toEqual(calls[0]);
  });

  it('keeps the default threshold at 64 KiB, far below the 1 MiB JetStream message limit', async () => {
    expect(DEFAULT_PAYLOAD_THRESHOLD_BYTES).toBe(65_536);
    const { put } = recordingPut();
    const atLimit: JsonValue = { text: 'x'.repeat(DEFAULT_PAYLOAD_THRESHOLD_BYTES - '{"text":""}'.length) };
    expect(encodeJsonPayload(atLimit).byteLength).toBe(DEFAULT_PAYLOAD_THRESHOLD_BYTES);
    expect(await offloadIfLarge(atLimit, DEFAULT_PAYLOAD_THRESHOLD_BYTES, put)).toEqual({ inline: atLimit });
  });

  it('rejects a threshold that is not a whole number of bytes', async () => {
    const { calls, put } = recordingPut();
    await expect(offloadIfLarge('x', -1, put)).rejects.toThrow(/whole number of bytes/);
    await expect(offloadIfLarge('x', Number.NaN, put)).rejects.toThrow(/whole number of bytes/);
    expect(calls).toHaveLength(0);
  });

  it('passes a failing put through instead of falling back to inline', async () => {
    const failing = () => Promise.reject(new Error('bucket full'));
    await expect(offloadIfLarge('x'.repeat(10), 1, failing)).rejects.toThrow('bucket full');
  });
});

describe('isPayloadRef', () => {
  it('accepts a reference', () => {
    expect(isPayloadRef(ref)).toBe(true);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a string uri', ref.uri],
    ['an inline value', { text: 'hello' }],
    ['a uri with another scheme', { ...ref, uri: `s3://bucket/${SHA}` }],
    ['an upper-case hash', { ...ref, sha256: SHA.toUpperCase() }],
    ['a short hash', { ...ref, sha256: 'abc' }],
    ['a negative size', { ...ref, size: -1 }],
    ['a fractional size', { ...ref, size: 1.5 }],
    ['a missing size', { uri: ref.uri, sha256: SHA }],
  ])('rejects %s', (_name, value) => {
    expect(isPayloadRef(value)).toBe(false);
  });
});

describe('payload uris', () => {
  it('splits a uri into bucket and hash', () => {
    expect(parsePayloadUri(ref.uri)).toEqual({ bucket: 'dura_payloads', sha256: SHA });
    expect(parsePayloadUri(`dura-obj://dura_payloads/${SHA}/extra`)).toBeUndefined();
    expect(parsePayloadUri(`dura-obj://${SHA}`)).toBeUndefined();
  });

  it('refuses a reference whose uri names another hash than its sha256', () => {
    const other = 'b'.repeat(64);
    expect(() => checkPayloadRef({ ...ref, uri: payloadUri('dura_payloads', other) })).toThrow(
      expect.objectContaining({ code: 'payload_ref_invalid' }),
    );
    expect(() => checkPayloadRef({ ...ref, size: 'big' })).toThrow(/size/);
    expect(checkPayloadRef(ref)).toEqual({ ...ref, bucket: 'dura_payloads' });
  });
});
