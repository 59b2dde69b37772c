import { describe, expect, it } from 'vitest';
import { payloadUri, type JsonValue, type PayloadRef } from '@dura/contracts';
import { createPayloadResolver } from '../src/index';

function refFor(n: number, size = 10): PayloadRef {
  const sha256 = n.toString(16).padStart(64, '0');
  return { uri: payloadUri('dura_payloads', sha256), sha256, size };
}

/** An in-memory stand-in for the store's getJson port: counts fetches, can fail or hold a fetch open. */
function memoryStore(values: Map<string, JsonValue>) {
  const fetched: string[] = [];
  let failNext = false;
  return {
    fetched,
    failOnce() {
      failNext = true;
    },
    getJson(ref: PayloadRef): Promise<JsonValue> {
      fetched.push(ref.sha256);
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error('store unavailable'));
      }
      const value = values.get(ref.sha256);
      return value === undefined
        ? Promise.reject(new Error('missing'))
        : Promise.resolve(structuredClone(value));
    },
  };
}

describe('createPayloadResolver', () => {
  const one = refFor(1);
  const two = refFor(2);
  const values = new Map<string, JsonValue>([
    [one.sha256, { rows: [1, 2, 3] }],
    [two.sha256, 'two'],
  ]);

  it('fetches once and serves later resolves from the cache', async () => {
    const store = memoryStore(values);
    const resolver = createPayloadResolver(store);
    expect(await resolver.resolve(one)).toEqual({ rows: [1, 2, 3] });
    expect(await resolver.resolve(one)).toEqual({ rows: [1, 2, 3] });
    expect(store.fetched).toEqual([one.sha256]);
  });

  it('shares one fetch between concurrent resolves of the same reference', async () => {
    const store = memoryStore(values);
    const resolver = createPayloadResolver(store);
    const [a, b] = await Promise.all([resolver.resolve(one), resolver.resolve(one)]);
    expect(a).toBe(b);
    expect(store.fetched).toEqual([one.sha256]);
  });

  it('hands out frozen values, so one reader cannot change what another reads', async () => {
    const resolver = createPayloadResolver(memoryStore(values));
    const value = (await resolver.resolve(one)) as { rows: number[] };
    expect(() => value.rows.push(4)).toThrow(TypeError);
  });

  it('evicts beyond cacheEntries and fetches the evicted value again', async () => {
    const store = memoryStore(values);
    const resolver = createPayloadResolver(store, { cacheEntries: 1 });
    await resolver.resolve(one);
    await resolver.resolve(two);
    await resolver.resolve(one);
    expect(store.fetched).toEqual([one.sha256, two.sha256, one.sha256]);
  });

  it('does not cache a failure: the next resolve fetches again', async () => {
    const store = memoryStore(values);
    store.failOnce();
    const resolver = createPayloadResolver(store);
    await expect(resolver.resolve(one)).rejects.toThrow('store unavailable');
    expect(await resolver.resolve(one)).toEqual({ rows: [1, 2, 3] });
    expect(store.fetched).toEqual([one.sha256, one.sha256]);
  });

  it('does not answer a reference with the right hash but another size from the cache', async () => {
    const store = memoryStore(values);
    const resolver = createPayloadResolver(store);
    await resolver.resolve(one);
    await resolver.resolve({ ...one, size: 11 });
    expect(store.fetched).toEqual([one.sha256, one.sha256]);
  });
});
