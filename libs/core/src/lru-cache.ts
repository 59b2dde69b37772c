/**
 * A least-recently-used cache bounded by entry count and by total weight (e.g. bytes): the one LRU every
 * service and library uses.
 */
export class LruCache<K, V> {
  readonly #entries = new Map<K, { value: V; weight: number }>();
  #weight = 0;

  constructor(
    readonly maxEntries: number,
    readonly maxWeight: number = Number.POSITIVE_INFINITY,
  ) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 0) {
      throw new RangeError(`cache entries must be a whole number >= 0, got ${maxEntries}`);
    }
    if (!(maxWeight >= 0)) throw new RangeError(`cache weight must be >= 0, got ${maxWeight}`);
  }

  get size(): number {
    return this.#entries.size;
  }

  get weight(): number {
    return this.#weight;
  }

  /** The cached value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Caches the value, evicting the least recently used entries to fit; a value heavier than the cache is not kept. */
  set(key: K, value: V, weight = 0): void {
    this.delete(key);
    if (this.maxEntries === 0 || weight > this.maxWeight) return;
    this.#entries.set(key, { value, weight });
    this.#weight += weight;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.maxEntries && this.#weight <= this.maxWeight) break;
      this.#entries.delete(oldest);
      this.#weight -= entry.weight;
    }
  }

  /** The entries, least recently used first; reading them does not make them more recent. */
  *entries(): IterableIterator<[K, V]> {
    for (const [key, entry] of this.#entries) yield [key, entry.value];
  }

  delete(key: K): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#weight -= entry.weight;
  }
}
