import { describe, expect, it } from 'vitest';
import { LruCache } from '../src/index';

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

  it('lists its entries least recently used first, without making them more recent', () => {
    const cache = new LruCache<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    cache.get('a');
    expect([...cache.entries()]).toEqual([
      ['b', 2],
      ['c', 3],
      ['a', 1],
    ]);
    cache.set('d', 4);
    expect(cache.get('b')).toBeUndefined();
  });

  it('keeps nothing with room for no entry', () => {
    const cache = new LruCache<string, number>(0);
    cache.set('a', 1);
    expect(cache.size).toBe(0);
  });
});
