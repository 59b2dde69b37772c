import { describe, expect, it } from 'vitest';
import { payloadUri, type JsonValue, type PayloadRef } from '@dura/contracts';
import { LruCache, createPayloadResolver } from '../src/index';

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

describe('LruCache', () => {
  it('evicts the least recently used entry when full', () => {
    const cache = new LruCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c')]).toEqual([1, 3]);
  });

  it('evicts by weight and never keeps an entry heavier than the whole cache', () => {
    const cache = new LruCache<string, string>(10, 100);
    cache.set('a', 'a', 60);
    cache.set('b', 'b', 30);
    cache.set('c', 'c', 30);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.weight).toBe(60);
    cache.set('huge', 'huge', 101);
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.size).toBe(2);
  });

  it('replacing a key adjusts the weight instead of counting it twice', () => {
    const cache = new LruCache<string, string>(10, 100);
    cache.set('a', 'first', 40);
    cache.set('a', 'second', 50);
    expect(cache.weight).toBe(50);
    expect(cache.get('a')).toBe('second');
  });
});

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
