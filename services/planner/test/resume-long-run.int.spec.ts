import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { fold, type RunState } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { createRunDriver } from '../src/index';
import { type Model } from '@dura/agents';
import { decodeSnapshot } from '../src/snapshot-codec';
import { createSnapshotStore, type SnapshotStore } from '../src/snapshot-store';
import {
  appendHistory,
  countingStore,
  longHistory,
  recordingLogger,
  type CountingStore,
} from './snapshot-support';
import { usePlannerConnections } from './planner-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const infra = useTestInfra({ database: false });
const EVERY = 100;
const runId = 'run-long';
const history = longHistory(runId, 5000);
const env = usePlannerConnections(infra);
let counting: CountingStore;
let snapshots: SnapshotStore;
let expected: RunState;

/** A model that must not be asked: a resumed run's recorded decisions are never asked again. */
const noModel: Model = {
  decide: () => Promise.reject(new Error('the model was asked during a resume')),
};

/** A driver of a process that just started: nothing cached. */
function freshDriver(log = recordingLogger().log) {
  return createRunDriver({
    store: counting.store,
    js: env.conn.js,
    model: noModel,
    log,
    clock: () => new Date(),
    snapshots: { every: EVERY, store: snapshots },
  });
}

beforeAll(async () => {
  counting = countingStore(env.conn);
  snapshots = createSnapshotStore({ js: env.conn.js });

  // The run's first 4,950 events; a planner that loads it then writes a snapshot at its last event.
  const lastSeq = await appendHistory(env.setup.store, runId, history.slice(0, 4950));
  const writer = freshDriver();
  expect((await writer.load(runId)).state.eventCount).toBe(4950);
  await writer.flushSnapshots();
  await appendHistory(env.setup.store, runId, history.slice(4950), lastSeq);
  expected = fold(await env.setup.store.read(runId));
});

describe('resuming a run of 5,000 events in a fresh process', () => {
  it('has a snapshot at the 4,950th event, and the full log folds to 5,000 events', async () => {
    const stored = await snapshots.get(runId);
    const decoded = decodeSnapshot(stored!, runId);
    expect(decoded.ok && decoded.snapshot.state.eventCount).toBe(4950);
    expect(expected.eventCount).toBe(5000);
    expect(expected).toMatchObject({ status: 'running', steps: 1666 });
  });

  it(`reads the snapshot and at most ${EVERY} events, and reaches the state of the whole log`, async () => {
    counting.reset();
    const { state, lastEventId } = await freshDriver().load(runId);

    expect(state).toEqual(expected);
    expect(lastEventId).toBe((history.at(-1) as RunEvent).meta.id);
    const snapshot = decodeSnapshot((await snapshots.get(runId))!, runId);
    const snapshotSeq = snapshot.ok ? snapshot.snapshot.seq : -1;
    // One direct get of the event the snapshot was taken at, then the tail after it: 50 events.
    expect(counting.reads).toEqual([
      { runId, fromSeq: snapshotSeq, count: 1 },
      { runId, fromSeq: snapshotSeq + 1, count: 50 },
    ]);
    expect(counting.eventsRead()).toBeLessThanOrEqual(EVERY + 1);
  });

  it('carries on from the resumed state without asking the model again: the pending call is re-dispatched', async () => {
    counting.reset();
    const outcome = await freshDriver().drive(runId);
    expect(outcome).toMatchObject({ modelCalls: 0, dispatched: 1, state: { eventCount: 5000 } });
    expect(counting.eventsRead()).toBeLessThanOrEqual(EVERY + 1);
  });

  it('without snapshots, the same resume reads the whole log', async () => {
    counting.reset();
    const driver = createRunDriver({
      store: counting.store,
      js: env.conn.js,
      model: noModel,
      log: recordingLogger().log,
      clock: () => new Date(),
      snapshots: false,
    });
    expect((await driver.load(runId)).state).toEqual(expected);
    expect(counting.eventsRead()).toBe(5000);
  });
});
