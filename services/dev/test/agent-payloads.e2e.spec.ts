// Large payloads across a crash (issue 7, acceptance 2: one fault test per capability).
//
// A tool result larger than DURA_PAYLOAD_THRESHOLD_BYTES goes to the object store `dura_payloads` under its
// sha256; `tool_call_completed` carries `result: null` and `resultRef {uri, sha256, size}`, and the planner
// fetches the value (hash-checked) when a later step references it. The worst moment is the gateway dying
// after the result and its reference are committed, before the observation is published (gateway.after-
// commit): the restarted relay must publish the same reference, the object must be intact, and the tool must
// not run again. And a reader must never use bytes that are not the ones referenced: an object overwritten
// behind the planner's back is refused as `payload_corrupt`, and the run does not go on with it.
import { describe, expect, it } from 'vitest';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { createDuraClient } from '@dura/client';
import { BUCKETS, type PayloadRef, type RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { sha256Hex } from '@dura/payloads';
import {
  expectKilledAt,
  keyOf,
  logOf,
  watchToEnd,
  type CrashSystem,
  type PlanRequest,
  untilLogged,
} from './crash-harness';
import { deadLettersOf, eventsOf, untilTool, useScratchSystem } from './tool-scratch';
import { bigValue } from './fixtures/agent3-tools';
import { eventually, sleep } from './system';

/** Lowered from 64 KiB so a 200 KiB result is well over it and every other event well under it. */
const THRESHOLD = 16_384;
const BIG_KB = 200;

const { scratch, crash } = useScratchSystem(() => ({ DURA_PAYLOAD_THRESHOLD_BYTES: String(THRESHOLD) }));

/** Step 1 returns ~200 KiB; step 2 echoes two fields of it, by reference. */
function bigThenEcho(runId: string, gate?: string): PlanRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: [
        { tool: 'test.big', args: { seed: runId, kb: BIG_KB, ...(gate ? { gate } : {}) } },
        { tool: 'echo', args: { field: '$steps.1.nested.field', count: '$steps.1.nested.count' } },
      ],
    },
  };
}

function payloadBucket(sys: CrashSystem): Promise<ObjectStore> {
  return new Objm(sys.system.js).open(BUCKETS.payloads);
}

/** The bytes the bucket holds under the reference's name, read with the plain object store client. */
async function storedBytes(sys: CrashSystem, ref: PayloadRef): Promise<Uint8Array> {
  const bytes = await (await payloadBucket(sys)).getBlob(ref.sha256);
  if (!bytes) throw new Error(`the bucket holds no object named ${ref.sha256}`);
  return bytes;
}

const byteSize = (event: RunEvent) => Buffer.byteLength(JSON.stringify(event));

describe('large payloads', () => {
  it('gateway SIGKILLed after committing a referenced result, before publishing it: the same reference is published, the tool ran once', async () => {
    const sys = crash();
    const request = bigThenEcho('payloads-after-commit');
    const key = keyOf(request, 1);
    await sys.restart('planner');
    await sys.restart('tool-gateway', 'gateway.after-commit:1');
    await sys.submit(request);
    await expectKilledAt(sys, 'tool-gateway', 'gateway.after-commit:1');

    // Committed: the ledger has the whole result, the outbox the observation with its reference; the log has
    // nothing yet, and the object is already in the bucket.
    const [effect] = await sys.system.sql<{ status: string; result: unknown }[]>`
      select status, result from effects where idempotency_key = ${key}`;
    expect(effect?.status).toBe('succeeded');
    const expected = bigValue(request.runId, BIG_KB);
    expect(effect?.result).toEqual(expected);
    const outbox = await sys.system.sql<{ msg_id: string; payload: RunEvent; sent_at: Date | null }[]>`
      select msg_id, payload, sent_at from outbox where run_id = ${request.runId} order by id`;
    expect(outbox.map((row) => [row.msg_id, row.sent_at])).toEqual([[`${key}:result`, null]]);
    const queued = outbox[0]?.payload as Extract<RunEvent, { type: 'tool_call_completed' }>;
    expect(queued.data.result).toBeNull();
    const ref = queued.data.resultRef as PayloadRef;
    expect(ref.uri).toBe(`dura-obj://${BUCKETS.payloads}/${ref.sha256}`);
    const bytes = await storedBytes(sys, ref);
    expect(sha256Hex(bytes), 'the stored bytes hash to the reference').toBe(ref.sha256);
    expect(bytes.byteLength, 'the reference names the stored size').toBe(ref.size);
    expect(ref.size).toBeGreaterThan(BIG_KB * 1024);
    expect(JSON.parse(Buffer.from(bytes).toString('utf8'))).toEqual(expected);
    expect(eventsOf(await logOf(sys, request.runId), 'tool_call_completed')).toEqual([]);

    await sys.restart('tool-gateway');
    const watched = await watchToEnd(sys, request.runId);
    const types = watched.map((e) => e.type);
    expect(types.at(-1), `the run completes; its log: ${types.join(', ')}`).toBe('run_completed');
    const log = await logOf(sys, request.runId);

    const completed = eventsOf(log, 'tool_call_completed');
    const requested = eventsOf(log, 'tool_call_requested');
    expect(completed.map((e) => e.data.idempotencyKey)).toEqual(requested.map((e) => e.data.idempotencyKey));
    expect(completed[0]?.data.idempotencyKey).toBe(key);
    expect(completed[0]?.data.result, 'the big result is not in the event').toBeNull();
    expect(completed[0]?.data.resultRef, 'the committed reference is the one published').toEqual(ref);
    expect(sha256Hex(await storedBytes(sys, ref))).toBe(ref.sha256);

    const largest = Math.max(...log.map(byteSize));
    expect(largest, 'no event carries the big value').toBeLessThan(THRESHOLD);

    const echoed = {
      field: `the field of ${request.runId}`,
      count: (expected as { nested: { count: number } }).nested.count,
    };
    expect(completed[1]?.data.result, 'step 2 got the referenced fields').toEqual(echoed);
    expect(requested[1]?.data.args).toEqual(echoed);
    expect(fold(log).output).toEqual(echoed);

    expect(sys.witness.requests(key), 'the big tool ran once').toBe(1);
    expect(sys.witness.effects(key)).toBe(1);
    const runs = (await scratch().toolLog()).filter(
      (e) => e.runId === request.runId && e.event === 'started',
    );
    expect(runs).toHaveLength(1);
    expect(
      (await sys.modelCalls(request.runId)).map((c) => c.decisions),
      'each decision asked once',
    ).toEqual([0, 1, 2]);
  });

  it('an object overwritten before the planner reads it: refused as payload_corrupt, the run does not go on', async () => {
    const sys = crash();
    const s = scratch();
    const request = bigThenEcho('payloads-tampered', 'tamper');
    const key = keyOf(request, 1);
    await sys.restart('tool-gateway');
    await sys.restart('planner');
    await sys.submit(request);

    // The planner is down while the result is recorded, so nothing reads the object before it is damaged.
    await untilTool(s, request.runId, 'started');
    await sys.proc('planner').kill('SIGKILL');
    await s.openGate('tamper');
    const log = await untilLogged(
      sys,
      request.runId,
      (e) => e.type === 'tool_call_completed',
      'the big result',
    );
    const ref = eventsOf(log, 'tool_call_completed')[0]?.data.resultRef as PayloadRef;
    expect(ref).toBeDefined();

    // Same size, one byte different, stored under the same name.
    const original = await storedBytes(sys, ref);
    const tampered = Uint8Array.from(original);
    const at = tampered.indexOf('abcdefghij'.charCodeAt(0), Math.floor(tampered.length / 2));
    tampered[at] = 'z'.charCodeAt(0);
    await (await payloadBucket(sys)).putBlob({ name: ref.sha256 }, tampered);
    const now = await storedBytes(sys, ref);
    expect(now.byteLength).toBe(ref.size);
    expect(sha256Hex(now)).not.toBe(ref.sha256);

    // The planner was killed while its drive of the run's request waited on the call at the gateway (a direct
    // call): the request comes again, and the drive that reads the damaged result refuses it.
    const planner = await sys.restart('planner');
    const [letter] = await eventually(async () => {
      const letters = await deadLettersOf(sys, 'requests', request.runId);
      return letters.length > 0 ? letters : undefined;
    }, 'the run request, driven again, to be refused');
    expect(letter?.error.code).toBe('payload_corrupt');
    expect(letter?.error.message).toContain(ref.uri);
    await planner.waitForOutput(/message dead-lettered.*payload_corrupt/, 10_000);

    // Another attempt (a signal moves the run) is refused the same way.
    await createNudge(sys, request.runId);
    const [again] = await eventually(async () => {
      const letters = await deadLettersOf(sys, 'signals', request.runId);
      return letters.length > 0 ? letters : undefined;
    }, 'the signal that moved the run to be refused');
    expect(again?.error.code).toBe('payload_corrupt');

    // The run never decides on the bad bytes: no second step, no completion.
    await sleep(2_000);
    const final = await logOf(sys, request.runId);
    expect(eventsOf(final, 'tool_call_requested').map((e) => e.data.tool)).toEqual(['test.big']);
    expect(eventsOf(final, 'thought')).toHaveLength(1);
    expect(fold(final).status).toBe('running');
    expect(sys.witness.requests(key), 'the big tool ran once').toBe(1);
  });
});

/** A signal no wait listens for: recording it drives the run once more. */
async function createNudge(sys: CrashSystem, runId: string): Promise<void> {
  await createDuraClient(sys.system).signal(runId, 'nudge', { signalId: `nudge-${runId}` });
}
