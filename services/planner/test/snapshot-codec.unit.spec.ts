import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonValue } from '@dura/contracts';
import { fold, type RunState } from '@dura/core';
import { arbValidHistory, RunLog } from '@dura/core/testing';
import {
  COMPRESS_ABOVE_BYTES,
  decodeSnapshot,
  encodeSnapshot,
  encodeSnapshotOf,
  SNAPSHOT_VERSION,
  snapshotOf,
  stateHash,
  type RunSnapshot,
} from '../src/snapshot-codec';
import { longHistory } from './snapshot-support';

const encoder = new TextEncoder();

/** A run three steps in: a completed call, a retried one, a pending one, a signal. */
function sampleRun(runId = 'run-snap') {
  const log = new RunLog(runId, [0, 2])
    .request([{ tool: 'echo', args: { n: 1 } }], { who: 'me' })
    .start()
    .think([{ tool: 'echo', args: { n: 1 } }])
    .intents()
    .complete('call-1', { n: 1 })
    .think([
      { tool: 'http.request', args: { url: 'https://x.test' } },
      { tool: 'echo', args: { b: [1, 'two', null] } },
    ])
    .intents()
    .fail('call-2', true)
    .complete('call-2', { status: 200 }, 2);
  const state = fold(log.events);
  return { log, state, snapshot: snapshotOf(state, log.events.at(-1)!.meta.id) };
}

/** A snapshot of a run of 1,000 events. */
function bigSnapshot(): RunSnapshot {
  const events = longHistory('run-big', 1000);
  return snapshotOf(fold(events), events.at(-1)!.meta.id);
}

/** The snapshot as stored, after `edit` changed its JSON form. */
function stored(snapshot: RunSnapshot, edit: (json: Record<string, unknown>) => void = () => undefined) {
  const json = JSON.parse(JSON.stringify(snapshot)) as Record<string, unknown>;
  edit(json);
  return encoder.encode(JSON.stringify(json));
}

function reasonOf(bytes: Uint8Array, runId = 'run-snap'): string {
  const decoded = decodeSnapshot(bytes, runId);
  if (decoded.ok) throw new Error('expected the snapshot to be refused');
  return decoded.reason;
}

describe('snapshotOf / encodeSnapshot / decodeSnapshot', () => {
  it('round-trips a folded state, with its seq, last event id and hash', () => {
    const { log, state, snapshot } = sampleRun();
    expect(snapshot).toMatchObject({ v: SNAPSHOT_VERSION, runId: 'run-snap', seq: state.lastSeq });
    expect(snapshot.eventId).toBe(log.events.at(-1)!.meta.id);
    expect(decodeSnapshot(encodeSnapshot(snapshot), 'run-snap')).toEqual({ ok: true, snapshot });
  });

  it('encodes a state serialized once to the same bytes as its snapshot, plain and gzipped', () => {
    const { log, state, snapshot } = sampleRun();
    const eventId = log.events.at(-1)!.meta.id;
    expect(encodeSnapshotOf(state, eventId)).toEqual(encodeSnapshot(snapshot));
    const big = { ...state, output: 'x'.repeat(COMPRESS_ABOVE_BYTES) };
    const bytes = encodeSnapshotOf(big, eventId);
    expect(bytes).toEqual(encodeSnapshot(snapshotOf(big, eventId)));
    expect(decodeSnapshot(bytes, 'run-snap')).toEqual({ ok: true, snapshot: snapshotOf(big, eventId) });
  });

  it('resumes exactly the stored state, even a tool result with an own "__proto__" key', () => {
    // JSON.parse makes "__proto__" an own key; a schema's parsed copy would turn it into a prototype.
    const result = JSON.parse('{"__proto__": {"polluted": true}, "kept": 1}') as JsonValue;
    const log = new RunLog('run-proto', [0])
      .request([{ tool: 'echo', args: {} }])
      .start()
      .think([{ tool: 'echo', args: {} }])
      .intents()
      .complete('call-1', result);
    const state = fold(log.events);
    const decoded = decodeSnapshot(encodeSnapshot(snapshotOf(state, 'last')), 'run-proto');
    if (!decoded.ok) throw new Error(decoded.reason);
    expect(decoded.snapshot.state).toEqual(state);
    const resumed = decoded.snapshot.state.calls[0]?.result as Record<string, unknown>;
    expect(Object.keys(resumed)).toEqual(['__proto__', 'kept']);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('round-trips the state of every valid history the fold can produce', () => {
    fc.assert(
      fc.property(arbValidHistory(), (events) => {
        const state = fold(events);
        const decoded = decodeSnapshot(encodeSnapshot(snapshotOf(state, 'last')), state.runId!);
        expect(decoded.ok ? decoded.snapshot.state : decoded.reason).toEqual(state);
      }),
      { numRuns: 200 },
    );
  });

  it('hashes the JSON text: stable through a store and load, changed by any value', () => {
    const { state } = sampleRun();
    const reloaded = JSON.parse(JSON.stringify(state)) as RunState;
    expect(stateHash(reloaded)).toBe(stateHash(state));
    expect(stateHash({ ...state, steps: state.steps + 1 })).not.toBe(stateHash(state));
    expect(stateHash(state)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gzips a large state, so a long run still fits in one KV value, and reads it back', () => {
    const snapshot = bigSnapshot();
    const json = JSON.stringify(snapshot).length;
    const bytes = encodeSnapshot(snapshot);
    expect(json).toBeGreaterThan(COMPRESS_ABOVE_BYTES);
    expect(bytes.length).toBeLessThan(json / 4);
    expect(decodeSnapshot(bytes, 'run-big')).toEqual({ ok: true, snapshot });
    // Small ones stay plain JSON, readable with `nats kv get`.
    expect(JSON.parse(new TextDecoder().decode(encodeSnapshot(sampleRun().snapshot)))).toMatchObject({
      v: SNAPSHOT_VERSION,
    });
  });

  it('refuses a snapshot without a run id', () => {
    const { state } = sampleRun();
    expect(() => snapshotOf({ ...state, runId: null }, 'x')).toThrow(TypeError);
  });
});

describe('decodeSnapshot refuses, naming the reason', () => {
  const { snapshot } = sampleRun();

  it('bytes that are not JSON, or not UTF-8', () => {
    expect(reasonOf(encoder.encode('{"v":1,"runId":'))).toMatch(/^not \(gzipped\) JSON/);
    expect(reasonOf(new Uint8Array([0xff, 0xfe, 0x00, 0x7b]))).toMatch(/^not \(gzipped\) JSON/);
    expect(reasonOf(new Uint8Array([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3]))).toMatch(/^not \(gzipped\) JSON/);
    const truncated = encodeSnapshot(bigSnapshot());
    expect(reasonOf(truncated.subarray(0, truncated.length - 9), 'run-big')).toMatch(/^not \(gzipped\) JSON/);
    expect(reasonOf(encoder.encode('null'))).toMatch(/version undefined/);
  });

  it('a snapshot of another format version', () => {
    expect(reasonOf(stored(snapshot, (json) => (json['v'] = 1)))).toMatch(
      new RegExp(`version 1, this planner reads ${SNAPSHOT_VERSION}`),
    );
  });

  it('a state whose bytes changed after hashing', () => {
    const reason = reasonOf(
      stored(snapshot, (json) => {
        (json['state'] as { steps: number }).steps += 1;
      }),
    );
    expect(reason).toMatch(/^state hash [0-9a-f]{64} does not match the recorded/);
  });

  it('a state that does not have the shape of a run state, even with a matching hash', () => {
    const reason = reasonOf(
      stored(snapshot, (json) => {
        const state = json['state'] as Record<string, unknown>;
        delete state['calls'];
        state['extra'] = true;
        json['stateHash'] = stateHash(state);
      }),
    );
    expect(reason).toMatch(/^invalid: /);
    expect(reason).toContain('state.calls');
    expect(reason).toContain('extra');
  });

  it('a malformed hash', () => {
    expect(reasonOf(stored(snapshot, (json) => (json['stateHash'] = 'abc')))).toMatch(/stateHash: must be/);
  });

  it("another run's snapshot", () => {
    expect(reasonOf(encodeSnapshot(snapshot), 'run-other')).toMatch(/snapshot is of run run-snap/);
    // The envelope relabelled, the state still another run's.
    expect(
      reasonOf(
        stored(snapshot, (json) => (json['runId'] = 'run-other')),
        'run-other',
      ),
    ).toMatch(/state run-snap/);
  });

  it('a seq that is not where its state ends', () => {
    expect(reasonOf(stored(snapshot, (json) => (json['seq'] = snapshot.seq + 1)))).toMatch(
      new RegExp(`snapshot seq ${snapshot.seq + 1} but its state ends at ${snapshot.seq}`),
    );
  });
});
