// Sub-agents across a crash (issue 7, acceptance 2: one fault test per capability).
//
// `dura.run_agent` starts a child run (id `<parent>-c<step>`) and parks the parent's call until the child
// reports; the child's output is the call's result, a failed child fails the call (`child_run_failed`).
// Three worst moments for the planner to die: while the child runs (the parent waits on the log alone), right
// after the parent journaled the child but before the child's request went out (planner.after-wait), and
// after the child finished but before its parent was told (planner.before-parent-report). After each, every
// charge takes effect once and no decision of parent or child is asked twice.
import { describe, expect, it } from 'vitest';
import type { AgentSpec } from '@dura/contracts';
import { childRunIdFor, fold } from '@dura/core';
import {
  expectKilledAt,
  logOf,
  useCrashSystem,
  watchToEnd,
  type CrashSystem,
  type PlanRequest,
} from './crash-harness';
import { count, killNow, plannerCaughtUp, typesOf, untilLogged, witnessedKeys } from './agent-support';
import { eventually } from './system';
import { eventsOf } from './tool-scratch';

const crash = useCrashSystem(['planner', 'tool-gateway']);

// Held back long enough to kill the planner while it runs, short enough for the witness tools' 3 s timeout.
const SLOW_CHARGE_MS = 2_000;

/** Two charges, the first slow; the child's output is the second charge (the last step's result). */
const payingChild: AgentSpec = {
  kind: 'scripted',
  steps: [
    { tool: 'pay.charge', args: { amount: 300, delayMs: SLOW_CHARGE_MS } },
    { tool: 'pay.charge', args: { amount: 400 } },
  ],
};

/** Runs `child`, then charges the amount of the child's output; its output names both. */
function parentOf(runId: string, child: AgentSpec): PlanRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: [
        { tool: 'dura.run_agent', args: { agent: child } },
        { tool: 'pay.charge', args: { amount: '$steps.1.output.amount' } },
      ],
      output: { child: '$steps.1.output', charge: '$steps.2.chargeId' },
    },
  };
}

/** Each decision of the run asked of the (scripted) model exactly once: 0, 1, ..., decisions - 1. */
async function expectEachDecisionAskedOnce(sys: CrashSystem, runId: string): Promise<void> {
  const state = fold(await logOf(sys, runId));
  const asked = (await sys.modelCalls(runId)).map((call) => call.decisions);
  expect(asked, `model calls of ${runId} by decision number`).toEqual(
    Array.from({ length: state.decisions }, (_, d) => d),
  );
}

/** The paying parent and its child both completed, every charge once, the child's output used by step 2. */
async function expectPaidThroughChild(sys: CrashSystem, runId: string): Promise<void> {
  const childRunId = childRunIdFor(runId, 1);
  const log = await watchToEnd(sys, runId, 40_000);
  expect(log.at(-1)?.type, typesOf(log).join(', ')).toBe('run_completed');
  const child = fold(await logOf(sys, childRunId));
  expect(child.status).toBe('completed');
  expect(child.request?.parent).toEqual({ runId, callId: 'call-1' });
  expect(child.output).toEqual(child.calls[1]?.result);
  expect(child.output).toMatchObject({ amount: 400 });

  const parent = fold(log);
  const [run, charge] = parent.calls;
  expect(run).toMatchObject({ status: 'completed', result: { status: 'completed', output: child.output } });
  expect(charge).toMatchObject({ tool: 'pay.charge', args: { amount: 400 }, status: 'completed' });
  expect(parent.output).toEqual({
    child: child.output,
    charge: (charge?.result as { chargeId: string }).chargeId,
  });
  expect(parent.children).toEqual([
    expect.objectContaining({ childRunId, callId: 'call-1', status: 'completed' }),
  ]);
  expect(count(log, 'child_run_requested')).toBe(1);
  expect(count(log, 'child_run_completed')).toBe(1);

  for (const call of [...child.calls, charge])
    expect(sys.witness.effects(call?.idempotencyKey ?? '')).toBe(1);
  expect(witnessedKeys(sys, runId)).toEqual([charge?.idempotencyKey]);
  expect(witnessedKeys(sys, childRunId).sort()).toEqual(child.calls.map((c) => c.idempotencyKey).sort());
  await expectEachDecisionAskedOnce(sys, runId);
  await expectEachDecisionAskedOnce(sys, childRunId);
}

describe('a parent run with a child run', () => {
  it('with the planner killed while the child charges: the child completes, the parent resumes with its output', async () => {
    const sys = crash();
    // The charge goes out as a tool task, so the planner holds nothing while it runs (the direct call's case is
    // the next test).
    await sys.restart('planner', undefined, { PLANNER_DIRECT_CALLS: 'false' });
    const request = parentOf('children-killed-mid-child', payingChild);
    const childRunId = childRunIdFor(request.runId, 1);
    await sys.submit(request);

    await untilLogged(sys, childRunId, (e) => e.type === 'tool_call_requested', "the child's first charge");
    // Killed with nothing in hand (every message it took is settled) while the slow charge is under way.
    await plannerCaughtUp(sys);
    await killNow(sys, 'planner');
    const child = await logOf(sys, childRunId);
    expect(count(child, 'tool_call_completed'), 'the slow charge is still running').toBe(0);
    expect(typesOf(await logOf(sys, request.runId))).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'tool_call_requested',
      'child_run_requested',
      'wait_requested',
    ]);

    await sys.restart('planner');
    await expectPaidThroughChild(sys, request.runId);
  });

  it('with the planner killed while its drive of the child waits on the slow charge at a gateway (a direct call): the child completes, the parent resumes', async () => {
    const sys = crash();
    await sys.restart('planner');
    const request = parentOf('children-killed-mid-direct-call', payingChild);
    const childRunId = childRunIdFor(request.runId, 1);
    await sys.submit(request);

    const asked = await untilLogged(
      sys,
      childRunId,
      (e) => e.type === 'tool_call_requested',
      "the child's first charge",
    );
    const key = eventsOf(asked, 'tool_call_requested')[0]?.data.idempotencyKey ?? '';
    // Killed once the charge is under way at the payment API, its result not back yet.
    await eventually(
      () => Promise.resolve(sys.witness.requests(key) === 1 || undefined),
      'the slow charge to reach the payment API',
    );
    await killNow(sys, 'planner');
    // The gateway runs the call to its end without the planner that asked: its result reaches the child's log,
    // and nothing else drives the child until a planner takes its message again.
    const child = await untilLogged(
      sys,
      childRunId,
      (e) => e.type === 'tool_call_completed',
      'the slow charge, finished without its planner',
    );
    expect(count(child, 'tool_call_completed')).toBe(1);
    expect(count(child, 'tool_call_requested')).toBe(1);

    await sys.restart('planner');
    await expectPaidThroughChild(sys, request.runId);
  });

  it('killed after the child was journaled, before its request went out: submits it on restart, once', async () => {
    const sys = crash();
    const request = parentOf('children-killed-after-wait', payingChild);
    const childRunId = childRunIdFor(request.runId, 1);
    await sys.restart('planner', 'planner.after-wait:1');
    await sys.submit(request);
    await expectKilledAt(sys, 'planner', 'planner.after-wait:1');
    const parked = await logOf(sys, request.runId);
    expect(typesOf(parked).slice(-2)).toEqual(['child_run_requested', 'wait_requested']);
    expect(await logOf(sys, childRunId), 'the child was never submitted').toEqual([]);

    await sys.restart('planner');
    await expectPaidThroughChild(sys, request.runId);
  });

  it('with a failing child, killed before the child reports: the parent still learns of it and fails with child_run_failed', async () => {
    const sys = crash();
    const failing: AgentSpec = {
      kind: 'scripted',
      steps: [{ tool: 'demo.fail', args: { message: 'the card was declined' } }],
    };
    const request = parentOf('children-failing-child', failing);
    const childRunId = childRunIdFor(request.runId, 1);
    await sys.restart('planner', 'planner.before-parent-report:1');
    await sys.submit(request);
    await expectKilledAt(sys, 'planner', 'planner.before-parent-report:1');

    // The child failed and says so in its own log; its parent has not heard and still waits.
    const child = fold(await logOf(sys, childRunId));
    expect(child.status).toBe('failed');
    expect(child.error).toMatchObject({
      code: 'tool_failed',
      message: 'step 1 (demo.fail) failed: the card was declined',
    });
    const waiting = await logOf(sys, request.runId);
    expect(count(waiting, 'child_run_completed')).toBe(0);
    expect(fold(waiting).status).toBe('waiting');

    await sys.restart('planner');
    const log = await watchToEnd(sys, request.runId, 30_000);
    expect(log.at(-1)?.type, typesOf(log).join(', ')).toBe('run_failed');
    expect(log.filter((e) => e.type === 'child_run_completed').map((e) => e.data)).toEqual([
      { childRunId, status: 'failed' },
    ]);
    const parent = fold(log);
    expect(parent.calls).toHaveLength(1);
    expect(parent.calls[0]).toMatchObject({
      tool: 'dura.run_agent',
      status: 'failed',
      error: { code: 'child_run_failed', message: `child run ${childRunId} failed` },
    });
    expect(parent.error).toEqual({
      code: 'tool_failed',
      message: `step 1 (dura.run_agent) failed: child run ${childRunId} failed`,
    });
    expect(witnessedKeys(sys, request.runId), 'step 2 never charged').toEqual([]);
    await expectEachDecisionAskedOnce(sys, request.runId);
    await expectEachDecisionAskedOnce(sys, childRunId);
  });
});
