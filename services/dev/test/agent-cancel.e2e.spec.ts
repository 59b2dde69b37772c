// Cancellation across crashes (issue 7, acceptance 2: one fault test per capability).
//
// A `cancel` signal makes the planner record `run_cancelled` and mark the run in the `dura_cancellations`
// bucket; every gateway watches the bucket and aborts the run's in-flight calls through `ctx.signal` (the call
// fails `cancelled`), and no later call of the run is ever dispatched. The worst moments: the cancel arrives
// while no planner runs (it must be picked up on restart), and the planner dies right after recording
// `run_cancelled`, before the gateways are told (planner.after-cancel: the mark must still be written, or the
// call in flight runs on to its end). A cancelled parent cancels its running child the same way.
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { createDuraClient } from '@dura/client';
import { fold } from '@dura/core';
import {
  expectKilledAt,
  keyOf,
  logOf,
  type CrashSystem,
  type PlanRequest,
  untilLogged,
} from './crash-harness';
import { cancellationMark, eventsOf, untilTool, useScratchSystem, type Scratch } from './tool-scratch';
import { eventually, sleep } from './system';

/**
 * How long the slow call would run if nobody aborted it: long enough that a planner restart on a loaded
 * machine (seconds to tens of seconds) cannot outlast it, so only an abort ends it in these tests.
 */
const SLOW_MS = 90_000;
/** How long a cancelled run may take to show each part of its cancellation (sized for a slow, loaded machine). */
const SETTLE_MS = 45_000;

const { scratch, crash } = useScratchSystem();

/** Step 1 waits (the call in flight when the run is cancelled); step 2 charges, and must never run. */
function slowThenCharge(runId: string): PlanRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: [
        { tool: 'test.slow', args: { label: runId, maxMs: SLOW_MS } },
        { tool: 'pay.charge', args: { amount: 250 } },
      ],
    },
  };
}

const cancelOf = (sys: CrashSystem, runId: string, reason: string) =>
  createDuraClient(sys.system).cancel(runId, { reason, signalId: `cancel-${runId}` });

/**
 * The contract of a cancelled run whose slow call was in flight: `run_cancelled` with the reason, the bucket
 * mark, the call aborted well before its 90 s (the tool saw the abort, the gateway recorded `cancelled`), and
 * nothing after it: no later intent, no effect at the witness, no further model decision.
 */
async function expectCancelledInFlight(
  sys: CrashSystem,
  s: Scratch,
  runId: string,
  reason: string,
): Promise<RunEvent[]> {
  const cancelled = await untilLogged(sys, runId, (e) => e.type === 'run_cancelled', 'run_cancelled');
  expect(eventsOf(cancelled, 'run_cancelled').map((e) => e.data.reason)).toEqual([reason]);

  const mark = await eventually(
    () => cancellationMark(sys, runId),
    `${runId}: its mark in dura_cancellations`,
    SETTLE_MS,
  );
  expect(mark.reason).toBe(reason);

  const aborted = await untilTool(s, runId, 'aborted', SETTLE_MS);
  expect(aborted.elapsedMs, 'aborted long before the call would have ended').toBeLessThan(SLOW_MS - 2_000);
  expect(aborted.reason).toContain(reason);

  const log = await untilLogged(
    sys,
    runId,
    (e) => e.type === 'tool_call_failed' && e.data.error.code === 'cancelled',
    'the gateway to record the aborted call',
  );
  const failed = eventsOf(log, 'tool_call_failed');
  expect(failed).toHaveLength(1);
  expect(failed[0]?.data.retryable).toBe(false);
  expect(failed[0]?.data.failRun).toBeUndefined();
  expect(failed[0]?.seq, 'recorded after run_cancelled').toBeGreaterThan(
    eventsOf(log, 'run_cancelled')[0]?.seq ?? Infinity,
  );
  expect(fold(log).status).toBe('cancelled');

  const [row] = await sys.system.sql<{ status: string }[]>`
    select status from effects where idempotency_key = ${failed[0]?.data.idempotencyKey ?? ''}`;
  expect(row?.status, 'the ledger records the call as failed, not in progress').toBe('failed');

  // Nothing after the cancelled call ever starts, even given time to.
  await sleep(1_500);
  const final = await logOf(sys, runId);
  expect(
    eventsOf(final, 'tool_call_requested').map((e) => e.data.tool),
    'no later step is requested',
  ).toEqual(['test.slow']);
  expect(
    sys.witness.keys().filter((k) => k.startsWith(`${runId}:`)),
    'no effect of this run',
  ).toEqual([]);
  expect((await s.toolLog()).filter((e) => e.runId === runId && e.event === 'finished')).toEqual([]);
  return final;
}

// Each case restarts a planner at least once: on a loaded machine that alone can take a minute.
describe('cancellation', { timeout: 240_000 }, () => {
  it('cancel sent while the planner is SIGKILLed mid-call: recorded on restart, the call aborted, nothing after it runs', async () => {
    const sys = crash();
    const s = scratch();
    const request = slowThenCharge('cancel-planner-down');
    await sys.restart('tool-gateway');
    await sys.restart('planner');
    await sys.submit(request);

    await untilTool(s, request.runId, 'started');
    await sys.proc('planner').kill('SIGKILL');
    const reason = 'stopped by an operator while the planner was down';
    await cancelOf(sys, request.runId, reason);
    // No planner: the signal waits in its stream, and the call runs on.
    await sleep(1_000);
    expect(eventsOf(await logOf(sys, request.runId), 'signal_received')).toEqual([]);
    expect(await cancellationMark(sys, request.runId)).toBeUndefined();
    expect((await s.toolLog()).filter((e) => e.runId === request.runId).map((e) => e.event)).toEqual([
      'started',
    ]);

    await sys.restart('planner');
    await expectCancelledInFlight(sys, s, request.runId, reason);
    expect(sys.witness.effects(keyOf(request, 2))).toBe(0);
    expect(
      (await sys.modelCalls(request.runId)).map((c) => c.decisions),
      'one decision, asked once',
    ).toEqual([0]);
  });

  it('planner SIGKILLed after run_cancelled is recorded, before the gateways are told: marked on restart, the call aborted', async () => {
    const sys = crash();
    const s = scratch();
    const request = slowThenCharge('cancel-after-cancel');
    await sys.restart('tool-gateway');
    await sys.restart('planner', 'planner.after-cancel:1');
    await sys.submit(request);

    await untilTool(s, request.runId, 'started');
    const reason = 'cancelled just before the planner died';
    await cancelOf(sys, request.runId, reason);
    await expectKilledAt(sys, 'planner', 'planner.after-cancel:1');

    // Recorded, but the gateways were never told: no mark, and the call is still running.
    const log = await logOf(sys, request.runId);
    expect(eventsOf(log, 'run_cancelled')).toHaveLength(1);
    expect(await cancellationMark(sys, request.runId)).toBeUndefined();
    await sleep(500);
    expect((await s.toolLog()).filter((e) => e.runId === request.runId).map((e) => e.event)).toEqual([
      'started',
    ]);

    await sys.restart('planner');
    await expectCancelledInFlight(sys, s, request.runId, reason);
    expect(sys.witness.effects(keyOf(request, 2))).toBe(0);
    expect((await sys.modelCalls(request.runId)).map((c) => c.decisions)).toEqual([0]);
  });

  it('parent cancelled while its child runs, planner SIGKILLed before the child is told: the child is cancelled and its call aborted', async () => {
    const sys = crash();
    const s = scratch();
    const parentId = 'cancel-parent';
    const childId = `${parentId}-c1`;
    const request: PlanRequest = {
      runId: parentId,
      agent: {
        kind: 'scripted',
        steps: [
          {
            tool: 'dura.run_agent',
            args: {
              agent: {
                kind: 'scripted',
                steps: [{ tool: 'test.slow', args: { label: childId, maxMs: SLOW_MS } }],
              },
            },
          },
          { tool: 'pay.charge', args: { amount: 350 } },
        ],
      },
    };
    await sys.restart('tool-gateway');
    await sys.restart('planner', 'planner.after-cancel:1');
    await sys.submit(request);

    await untilTool(s, childId, 'started');
    const reason = 'the parent is no longer needed';
    await cancelOf(sys, parentId, reason);
    await expectKilledAt(sys, 'planner', 'planner.after-cancel:1');
    // The parent's cancellation is recorded; the child was not told yet.
    expect(eventsOf(await logOf(sys, parentId), 'run_cancelled')).toHaveLength(1);
    expect(eventsOf(await logOf(sys, childId), 'signal_received')).toEqual([]);

    await sys.restart('planner');
    const childReason = `parent run ${parentId} was cancelled`;
    const childLog = await expectCancelledInFlight(sys, s, childId, childReason);
    expect(eventsOf(childLog, 'signal_received').map((e) => [e.data.name, e.data.signalId])).toEqual([
      ['cancel', `parent-cancelled:${parentId}`],
    ]);
    expect((await cancellationMark(sys, parentId))?.reason).toBe(reason);

    // The parent ends cancelled: its last lifecycle event is run_cancelled; after it only the child's report.
    const parentLog = await untilLogged(
      sys,
      parentId,
      (e) => e.type === 'child_run_completed',
      "the child's report to its parent",
    );
    const cancelledAt = parentLog.findIndex((e) => e.type === 'run_cancelled');
    expect(cancelledAt).toBeGreaterThan(0);
    expect(
      parentLog.slice(cancelledAt + 1).map((e) => e.type),
      'after run_cancelled only the child reports',
    ).toEqual(['child_run_completed']);
    expect(eventsOf(parentLog, 'child_run_completed').map((e) => [e.data.childRunId, e.data.status])).toEqual(
      [[childId, 'cancelled']],
    );
    const parent = fold(parentLog);
    expect(parent.status).toBe('cancelled');
    expect(parent.children.map((c) => [c.childRunId, c.status])).toEqual([[childId, 'cancelled']]);
    expect(
      eventsOf(parentLog, 'tool_call_requested').map((e) => e.data.tool),
      'the parent never reached its charge',
    ).toEqual(['dura.run_agent']);
    expect(sys.witness.effects(keyOf(request, 2))).toBe(0);
    expect(sys.witness.keys().filter((k) => k.startsWith(parentId))).toEqual([]);
  });
});
