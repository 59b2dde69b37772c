import { beforeAll, describe, expect, it, vi } from 'vitest';
import { newEvent, type ScriptedStep } from '@dura/contracts';
import { fold, type RunState } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { createRunDriver, type RunDriver } from '../src/index';
import { createScriptedModel } from '@dura/agents';
import { decodeSnapshot, type RunSnapshot } from '../src/snapshot-codec';
import { createSnapshotStore, type SnapshotStore } from '../src/snapshot-store';
import { scriptedRequest } from './run-history';
import { appendRequest } from './support';
import { countingStore, recordingLogger, type CountingStore } from './snapshot-support';
import { usePlannerConnections } from './planner-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const infra = useTestInfra({ database: false });
const EVERY = 10;
const plan: ScriptedStep[] = Array.from({ length: 12 }, (_, i) => ({ tool: 'echo', args: { step: i + 1 } }));
const env = usePlannerConnections(infra);
let counting: CountingStore;
let kv: SnapshotStore;

beforeAll(() => {
  counting = countingStore(env.conn);
  kv = createSnapshotStore({ js: env.conn.js });
});

function driverWith(snapshots: SnapshotStore, every = EVERY, log = recordingLogger().log): RunDriver {
  return createRunDriver({
    store: counting.store,
    js: env.conn.js,
    model: createScriptedModel(),
    log,
    clock: () => new Date(),
    snapshots: { every, store: snapshots },
  });
}

/** Appends the run request the way intake does. */
async function submit(runId: string): Promise<void> {
  await appendRequest(env.setup.store, scriptedRequest(runId, plan));
}

/** What the tool gateway's relay does for a dispatched call: append its observation, unguarded. */
async function observe(state: RunState): Promise<void> {
  const runId = state.runId!;
  for (const call of state.calls.filter((c) => c.status === 'pending')) {
    const data = { callId: call.callId, idempotencyKey: call.idempotencyKey, result: call.args };
    const event = newEvent(
      'tool_call_completed',
      { ...data, attempt: 1, deduped: false, durationMs: 1 },
      { id: `${call.idempotencyKey}:result`, runId, ts: new Date().toISOString(), correlationId: runId },
    );
    await env.setup.store.append(runId, [event], { expectedSeq: 'any' });
  }
}

/** Drives the run to its end, standing in for the gateway between drives. */
async function driveToEnd(
  driver: RunDriver,
  runId: string,
  between = () => Promise.resolve(),
): Promise<RunState> {
  for (let i = 0; i < 100; i += 1) {
    const { state } = await driver.drive(runId);
    await between();
    if (state.status === 'completed') return state;
    await observe(state);
  }
  throw new Error(`run ${runId} did not complete`);
}

describe('while driving a run', () => {
  it(`writes a snapshot each time the run has grown by ${EVERY} events, each one the fold of the log up to it`, async () => {
    const runId = 'run-snapshotted';
    const written: RunSnapshot[] = [];
    const recording: SnapshotStore = {
      get: (id) => kv.get(id),
      async put(id, bytes) {
        const decoded = decodeSnapshot(bytes, id);
        if (!decoded.ok) throw new Error(`wrote a bad snapshot: ${decoded.reason}`);
        written.push(decoded.snapshot);
        await kv.put(id, bytes);
      },
    };
    const driver = driverWith(recording);
    await submit(runId);
    const final = await driveToEnd(driver, runId, () => driver.flushSnapshots());
    await driver.load(runId);
    await driver.flushSnapshots();

    const log = await env.setup.store.read(runId);
    expect(final.eventCount).toBe(40);
    expect(written.length).toBeGreaterThanOrEqual(3);
    const counts = written.map((s) => s.state.eventCount);
    counts.forEach((count, i) => expect(count - (counts[i - 1] ?? 0)).toBeGreaterThanOrEqual(EVERY));
    expect(final.eventCount - counts.at(-1)!).toBeLessThan(EVERY);
    for (const snapshot of written) {
      const upTo = log.filter((e) => e.seq <= snapshot.seq);
      expect(snapshot.state).toEqual(fold(upTo));
      expect(snapshot.eventId).toBe(upTo.at(-1)!.meta.id);
    }

    // A fresh process resumes from the newest one, reading fewer than EVERY events of the log.
    counting.reset();
    expect((await driverWith(kv).load(runId)).state).toEqual(fold(log));
    expect(counting.eventsRead()).toBeLessThanOrEqual(EVERY);
  });

  it('never fails a decision because the snapshot store fails', async () => {
    const runId = 'run-kv-down';
    const broken: SnapshotStore = {
      get: () => Promise.reject(new Error('kv: timeout')),
      put: () => Promise.reject(new Error('kv: maximum payload exceeded')),
    };
    const { log, warnings } = recordingLogger();
    const driver = driverWith(broken, 1, log);
    await submit(runId);
    const final = await driveToEnd(driver, runId, () => driver.flushSnapshots());

    expect(final).toMatchObject({ status: 'completed', eventCount: 40 });
    expect(warnings()).toContain('snapshot ignored; folding the whole log: snapshot store unavailable');
    expect(warnings().filter((w) => w.startsWith('snapshot not written')).length).toBeGreaterThan(5);
  });

  it('never waits for a snapshot write', async () => {
    const runId = 'run-kv-slow';
    let release = () => undefined as void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let writes = 0;
    const slow: SnapshotStore = {
      get: () => Promise.resolve(undefined),
      put: async () => {
        writes += 1;
        await released;
      },
    };
    const driver = driverWith(slow, 1);
    await submit(runId);
    try {
      expect(await driveToEnd(driver, runId)).toMatchObject({ status: 'completed' });
      // One write started and hung; every later chance found it still in flight and skipped.
      expect(writes).toBe(1);
    } finally {
      release();
      await driver.flushSnapshots();
    }
  });
});
