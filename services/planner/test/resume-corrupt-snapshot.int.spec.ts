import { beforeAll, describe, expect, it, vi } from 'vitest';
import { runSubject, STREAMS, type RunEvent } from '@dura/contracts';
import { fold, type RunState } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { createRunDriver } from '../src/index';
import { type Model } from '@dura/agents';
import {
  decodeSnapshot,
  encodeSnapshot,
  snapshotOf,
  stateHash,
  type RunSnapshot,
} from '../src/snapshot-codec';
import { createSnapshotStore, type SnapshotStore } from '../src/snapshot-store';
import {
  appendHistory,
  countingStore,
  longHistory,
  recordingLogger,
  unstamped,
  type CountingStore,
} from './snapshot-support';
import { usePlannerConnections } from './planner-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const infra = useTestInfra({ database: false });
const runId = 'run-corrupt';
const LENGTH = 1000;
const env = usePlannerConnections(infra);
let counting: CountingStore;
let snapshots: SnapshotStore;
/** The run's log as stored, and its fold: what every resume must reach. */
let log: RunEvent[];
let expected: RunState;
/** Sequence of an event of another run, appended in the middle of this one. */
let foreignSeq: number;

const noModel: Model = { decide: () => Promise.reject(new Error('the model was asked during a resume')) };

function freshDriver() {
  const logger = recordingLogger();
  const driver = createRunDriver({
    store: counting.store,
    js: env.conn.js,
    model: noModel,
    log: logger.log,
    clock: () => new Date(),
    snapshots: { every: 100, store: snapshots },
  });
  return { driver, warnings: logger.warnings };
}

/** The true snapshot after the log's `count`-th event. */
function snapshotAfter(count: number): RunSnapshot {
  return snapshotOf(fold(log.slice(0, count)), log[count - 1]!.meta.id);
}

/** `snapshot` with its state edited and the hash recomputed: self-consistent, so only the log can refute it. */
function rehashed(snapshot: RunSnapshot, edit: (state: RunState) => RunState): RunSnapshot {
  const state = edit(structuredClone(snapshot.state));
  return { ...snapshot, seq: state.lastSeq, state, stateHash: stateHash(state) };
}

function json(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}

beforeAll(async () => {
  counting = countingStore(env.conn);
  snapshots = createSnapshotStore({ js: env.conn.js });
  const history = longHistory(runId, LENGTH);
  const half = await appendHistory(env.setup.store, runId, history.slice(0, LENGTH / 2));
  const other = longHistory('run-bystander', 3);
  foreignSeq = await appendHistory(env.setup.store, 'run-bystander', other);
  await appendHistory(env.setup.store, runId, history.slice(LENGTH / 2), half);
  log = await env.setup.store.read(runId);
  expected = fold(log);
});

describe('a snapshot that cannot be trusted is ignored, and the whole log is folded', () => {
  // Each case: what is stored under the run's key, and the reason the warning must name.
  const cases: [string, () => Uint8Array, RegExp][] = [
    ['garbage bytes', () => new Uint8Array([0x00, 0xff, 0x13, 0x37]), /not \(gzipped\) JSON/],
    ['a truncated value', () => json(snapshotAfter(900)).subarray(0, 500), /not \(gzipped\) JSON/],
    ['an unknown format version', () => json({ ...snapshotAfter(900), v: 7 }), /snapshot version 7/],
    [
      'a state changed after it was hashed',
      () => json({ ...snapshotAfter(900), state: { ...snapshotAfter(900).state, steps: 1 } }),
      /state hash .* does not match/,
    ],
    [
      "another run's snapshot under this run's key",
      () => encodeSnapshot(snapshotOf(fold(longHistory('run-other', 40)), 'run-other#40')),
      /snapshot is of run run-other/,
    ],
    [
      'a seq beyond the end of the log (from a stream that was reset)',
      () => encodeSnapshot(rehashed(snapshotAfter(LENGTH), (s) => ({ ...s, lastSeq: s.lastSeq + 10_000 }))),
      /the log has no event of this run at seq \d+: the snapshot is stale/,
    ],
    [
      "a seq that holds another run's event",
      () => encodeSnapshot(rehashed(snapshotAfter(LENGTH / 2), (s) => ({ ...s, lastSeq: foreignSeq }))),
      /the log has no event of this run at seq \d+/,
    ],
    [
      'an event at its seq other than the one it names',
      () => encodeSnapshot({ ...snapshotAfter(900), eventId: `${runId}#elsewhere` }),
      /the event at seq \d+ is run-corrupt#900, but the snapshot was taken after run-corrupt#elsewhere/,
    ],
    [
      'a state the log after it does not follow (a call the tail completes is missing)',
      () => {
        // After event 901 (an intent), the next event completes that call.
        const at = snapshotAfter(901);
        const pending = at.state.calls.at(-1)!;
        expect(log[901]).toMatchObject({ type: 'tool_call_completed', data: { callId: pending.callId } });
        return encodeSnapshot(rehashed(at, (s) => ({ ...s, calls: s.calls.slice(0, -1) })));
      },
      /the log after seq \d+ does not follow it: .*call-\d+ was never requested/,
    ],
  ];

  it.each(cases)('%s', async (_name, stored, reason) => {
    await snapshots.put(runId, stored());
    const { driver, warnings } = freshDriver();
    counting.reset();

    expect((await driver.load(runId)).state).toEqual(expected);
    expect(counting.reads).toContainEqual({ runId, fromSeq: 1, count: LENGTH });
    expect(warnings()).toEqual([expect.stringMatching(reason)]);
    expect(warnings()[0]).toMatch(/^snapshot ignored; folding the whole log/);

    // Having folded the whole log, the driver replaces the bad snapshot with a good one.
    await driver.flushSnapshots();
    const healed = decodeSnapshot((await snapshots.get(runId))!, runId);
    expect(healed.ok && healed.snapshot.state).toEqual(expected);
  });

  it('while the true snapshot is used, with the tail after it only', async () => {
    await snapshots.put(runId, encodeSnapshot(snapshotAfter(950)));
    const { driver, warnings } = freshDriver();
    counting.reset();
    expect((await driver.load(runId)).state).toEqual(expected);
    expect(counting.eventsRead()).toBe(1 + 50);
    expect(warnings()).toEqual([]);
  });
});

describe('a run whose log was wiped and written again after its snapshot', () => {
  it('ignores the stale snapshot and folds the new log', async () => {
    const id = 'run-wiped';
    await appendHistory(env.setup.store, id, longHistory(id, 300));
    const first = freshDriver();
    await first.driver.load(id);
    await first.driver.flushSnapshots();
    expect(await snapshots.get(id)).toBeDefined();

    // The operator purges the run's subject and the run is submitted again: a shorter log, new event ids.
    await env.setup.jsm.streams.purge(STREAMS.runs, { filter: runSubject(id) });
    const again = longHistory(id, 30).map((e) => ({ ...e, meta: { ...e.meta, id: `${e.meta.id}~again` } }));
    for (const event of again) await env.setup.store.append(id, [unstamped(event)], { expectedSeq: 'any' });

    const { driver, warnings } = freshDriver();
    counting.reset();
    const { state } = await driver.load(id);
    expect(state).toEqual(fold(await env.setup.store.read(id)));
    expect(state.eventCount).toBe(30);
    expect(warnings()).toEqual([
      expect.stringMatching(/no event of this run at seq \d+: the snapshot is stale/),
    ]);
  });
});
