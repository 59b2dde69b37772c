// The crash points of DESIGN, in a worker (planner and gateway in one process, calls run in place inside
// the drive): the worker is SIGKILLed at each failpoint in the middle of a 5-step run, restarted without it,
// and the run must finish with every charge made once and no recorded decision asked again.
import { describe, expect, it } from 'vitest';
import { STREAMS } from '@dura/contracts';
import { fold } from '@dura/core';
import {
  expectRecovered,
  keyOf,
  logOf,
  paymentPlan,
  useCrashSystem,
  watchToEnd,
  type PlanRequest,
} from './crash-harness';
import { effectRow, killedAt, killerOf } from './crash-points-support';

const crash = useCrashSystem(['projector']);

const killAt = killerOf('worker');

describe('a worker', () => {
  it('runs the calls in place: a 5-step run publishes no tool task and no decide task', async () => {
    const sys = crash();
    await sys.restart('worker');
    const tasksBefore = (await sys.system.jsm.streams.info(STREAMS.tasks)).state.last_seq;
    const request = paymentPlan('worker-in-place');
    await sys.submit(request);
    await expectRecovered(sys, request.runId, { steps: 5 });
    expect((await sys.system.jsm.streams.info(STREAMS.tasks)).state.last_seq).toBe(tasksBefore);
  });
});

describe('a worker killed with SIGKILL', () => {
  it('after the model answered, before the thought is appended: asks for that one decision again, and only that', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-worker-after-model', 'planner.after-model:3');
    const log = await logOf(sys, request.runId);
    expect(log.filter((e) => e.type === 'thought')).toHaveLength(2);
    expect((await sys.modelCalls(request.runId)).map((c) => c.decisions)).toEqual([0, 1, 2]);
    expect(sys.witness.requests(keyOf(request, 3))).toBe(0);

    await sys.restart('worker');
    await expectRecovered(sys, request.runId, { steps: 5, repeatedDecision: 2 });
  });

  it('after the intent is appended, before the call runs: runs it without asking the model', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-worker-after-intent', 'planner.after-intent:3');
    const last = (await logOf(sys, request.runId)).at(-1);
    expect(last?.type).toBe('tool_call_requested');
    expect(sys.witness.requests(keyOf(request, 3))).toBe(0);

    await sys.restart('worker');
    await expectRecovered(sys, request.runId, { steps: 5 });
  });

  it('after the effect ran, before its result commits: settles a tool with status() by asking, not re-running', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-worker-after-effect', 'gateway.after-effect:3');
    const key = keyOf(request, 3); // pay.checked
    expect(sys.witness.effects(key)).toBe(1);
    expect(await effectRow(sys, key)).toEqual({ status: 'started', attempts: 1 });

    await sys.restart('worker');
    await expectRecovered(sys, request.runId, { steps: 5 });
    expect(sys.witness.lookups(key), 'reconciled through status()').toBeGreaterThanOrEqual(1);
    expect(sys.witness.requests(key)).toBe(1);
  });

  it('after the effect ran, before its result commits: re-runs an idempotent tool without status() under the same key', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-worker-after-effect-rerun', 'gateway.after-effect:2');
    const key = keyOf(request, 2); // pay.charge
    expect(sys.witness.effects(key)).toBe(1);

    await sys.restart('worker');
    await expectRecovered(sys, request.runId, { steps: 5 });
    expect(sys.witness.requests(key)).toBe(2);
    expect(await effectRow(sys, key)).toEqual({ status: 'succeeded', attempts: 2 });
  });

  it('after the result commits, before the observation is published: the outbox publishes it', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-worker-after-commit', 'gateway.after-commit:3');
    const key = keyOf(request, 3);
    expect(await effectRow(sys, key)).toEqual({ status: 'succeeded', attempts: 1 });
    const log = await logOf(sys, request.runId);
    expect(log.some((e) => e.type === 'tool_call_completed' && e.data.idempotencyKey === key)).toBe(false);

    await sys.restart('worker');
    await expectRecovered(sys, request.runId, { steps: 5 });
    expect(sys.witness.requests(key)).toBe(1);
  });

  it('after the observation is published, before it is marked sent: the drive goes on once, nothing twice', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-worker-after-publish', 'relay.after-publish:3');

    await sys.restart('worker');
    const log = await expectRecovered(sys, request.runId, { steps: 5 });
    const observations = log.filter((e) => e.type === 'tool_call_completed');
    expect(new Set(observations.map((e) => e.data.idempotencyKey)).size).toBe(observations.length);
    for (let step = 1; step <= 5; step += 1) expect(sys.witness.requests(keyOf(request, step))).toBe(1);
  });
});

describe('a worker killed with SIGKILL during a read-only call', () => {
  /** Three calls of the built-in read-only `echo`. */
  const echoPlan = (runId: string): PlanRequest => ({
    runId,
    agent: { kind: 'scripted', steps: [1, 2, 3].map((n) => ({ tool: 'echo', args: { n } })) },
  });

  it('after the call ran, before its result is in the log: runs it again, logs one result, and only the re-run has a ledger row', async () => {
    const sys = crash();
    const request = await killedAt(
      sys,
      'worker',
      'gateway.after-effect:2',
      echoPlan('crash-worker-read-only'),
    );
    const key = (step: number) => keyOf(request, step);
    const before = await logOf(sys, request.runId);
    expect(before.at(-1)).toMatchObject({ type: 'tool_call_requested', data: { idempotencyKey: key(2) } });
    expect(await effectRow(sys, key(1)), 'a result kept in the log alone').toBeUndefined();
    expect(await effectRow(sys, key(2)), 'nothing recorded of the interrupted call').toBeUndefined();

    await sys.restart('worker');
    const watched = await watchToEnd(sys, request.runId);
    expect(watched.at(-1)?.type).toBe('run_completed');
    const log = await logOf(sys, request.runId);
    expect(log).toEqual(watched);
    expect(fold(log).status).toBe('completed');
    const results = log.flatMap((e) => (e.type === 'tool_call_completed' ? [e.data] : []));
    expect(
      results.map((r) => r.idempotencyKey),
      'one result per call',
    ).toEqual([key(1), key(2), key(3)]);
    expect(results.map((r) => r.result)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    // The resumed drive found the intent recorded before it began: the call ran again under a claim.
    expect(await effectRow(sys, key(2))).toEqual({ status: 'succeeded', attempts: 1 });
    expect(await effectRow(sys, key(3)), 'the next call ran fresh again').toBeUndefined();
  });
});
