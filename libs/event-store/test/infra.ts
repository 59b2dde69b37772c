import { retryUntil } from '@dura/testing';
export { retryUntil };
import { beforeAll } from 'vitest';
import { useNatsConnections, useTestInfra, type TestNatsHandles } from '@dura/testing';
import type { NewEvent } from '@dura/contracts';
import { createEventStore, ensureStreams, type EventStore, type ReadReport } from '../src/index';
import { runEvents } from './run-events';

export { useNatsConnections, useTestInfra };
export type NatsHandles = TestNatsHandles;

/** What a spec file's tests work with: a connection of the file, and an event store on it. */
export interface StoreUnderTest extends NatsHandles {
  readonly store: EventStore;
  /** Every read the store has served, in order (a test may empty it). */
  readonly reads: ReadReport[];
}

/**
 * Registers a beforeAll in the calling spec file: a connection from `open` (closed after the file), the
 * streams ensured on it, and an event store on it that records its reads.
 */
export function useEventStore(open: () => Promise<NatsHandles>): StoreUnderTest {
  let handles: NatsHandles | undefined;
  let store: EventStore | undefined;
  const reads: ReadReport[] = [];
  beforeAll(async () => {
    handles = await open();
    await ensureStreams(handles.jsm);
    store = createEventStore({ ...handles, onRead: (report) => reads.push(report) });
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
    reads,
  };
}

/** Appends `events` one at a time, as separate deciders would; returns their sequences. */
export async function appendEach(store: EventStore, runId: string, events: NewEvent[]): Promise<number[]> {
  const seqs: number[] = [];
  for (const event of events) seqs.push(...(await store.append(runId, [event], { expectedSeq: 'any' })).seqs);
  return seqs;
}

/**
 * Appends a run of four events (requested, started, a thought, completed) one at a time, interleaved with
 * two events of the run `bystander`, so the run's sequences have gaps.
 */
export async function appendInterleaved(store: EventStore, runId: string, bystander: string): Promise<void> {
  const mine = runEvents(runId);
  const other = runEvents(bystander);
  await appendEach(store, runId, [mine.requested()]);
  await appendEach(store, bystander, [other.requested()]);
  await appendEach(store, runId, [mine.started(), mine.thought(1)]);
  await appendEach(store, bystander, [other.started()]);
  await appendEach(store, runId, [mine.completed()]);
}
