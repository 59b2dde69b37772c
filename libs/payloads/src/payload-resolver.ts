import type { JsonValue, PayloadRef } from '@dura/contracts';
import { LruCache } from '@dura/core';
import type { PayloadStore } from './payload-store';

/** Lazy resolution of offloaded values for readers: fetch on first use, verified, then served from memory. */
export interface PayloadResolver {
  /**
   * The referenced value, verified against its sha256 and size. Values are shared between callers and frozen:
   * copy before changing one.
   */
  resolve(ref: PayloadRef): Promise<JsonValue>;
}

export interface PayloadResolverOptions {
  /** Verified values kept in memory. Default 64. */
  cacheEntries?: number;
  /** Total stored size (bytes) of the kept values, so a few huge payloads cannot fill the heap. Default 32 MiB. */
  cacheBytes?: number;
}

const DEFAULT_CACHE_BYTES = 32 * 1024 * 1024;

/** A resolver over `store`; concurrent resolves of one reference share a single fetch, and failures are not cached. */
export function createPayloadResolver(
  store: Pick<PayloadStore, 'getJson'>,
  options: PayloadResolverOptions = {},
): PayloadResolver {
  const cache = new LruCache<string, JsonValue>(
    options.cacheEntries ?? 64,
    options.cacheBytes ?? DEFAULT_CACHE_BYTES,
  );
  const inFlight = new Map<string, Promise<JsonValue>>();

  return {
    resolve(ref) {
      // The size is part of the key: a reference with the right hash but a wrong size must still fail.
      const key = `${ref.uri}#${ref.size}`;
      const cached = cache.get(key);
      if (cached !== undefined) return Promise.resolve(cached);
      let pending = inFlight.get(key);
      if (pending === undefined) {
        pending = store
          .getJson(ref)
          .then((value) => {
            const frozen = deepFreeze(value);
            cache.set(key, frozen, ref.size);
            return frozen;
          })
          .finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },
  };
}

function deepFreeze(value: JsonValue): JsonValue {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
