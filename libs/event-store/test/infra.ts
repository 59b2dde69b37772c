import { retryUntil } from '@dura/testing';
export { retryUntil };
import { beforeAll } from 'vitest';
import { useNatsConnections, useTestInfra, type TestNatsHandles } from '@dura/testing';
import { createEventStore, ensureStreams, type EventStore } from '../src/index';

export { useNatsConnections, useTestInfra };
export type NatsHandles = TestNatsHandles;

/** What a spec file's tests work with: a connection of the file, and an event store on it. */
export interface StoreUnderTest extends NatsHandles {
  readonly store: EventStore;
}

/**
 * Registers a beforeAll in the calling spec file: a connection from `open` (closed after the file), the
 * streams ensured on it, and an event store on it built with `options`.
 */
export function useEventStore(
  open: () => Promise<NatsHandles>,
  options: Omit<Parameters<typeof createEventStore>[0], 'js' | 'jsm'> = {},
): StoreUnderTest {
  let handles: NatsHandles | undefined;
  let store: EventStore | undefined;
  beforeAll(async () => {
    handles = await open();
    await ensureStreams(handles.jsm);
    store = createEventStore({ ...handles, ...options });
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useEventStore(): only available inside tests, after beforeAll');
    return value;
  };
  return {
    get nc() {
      return ready(handles).nc;
    },
    get js() {
      return ready(handles).js;
    },
    get jsm() {
      return ready(handles).jsm;
    },
    get store() {
      return ready(store);
    },
  };
}
