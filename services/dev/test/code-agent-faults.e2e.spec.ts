// A code agent under SIGKILL at the worst points, on real NATS, Postgres and processes: after an intent is
// recorded and before it is dispatched, in the gateway mid-charge (after the effect, after the commit),
// in the middle of a parallel group, and while the run waits on a signal or an approval (the signal sent
// while the planner and the gateway are down). After each kill the process restarts; every run completes,
// each idempotency key reaches the payment witness exactly once, and the log holds each call once.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import type { RunEvent } from '@dura/contracts';
import { childRunIdFor, fold } from '@dura/core';
import {
  expectKilledAt,
  logOf,
  useCrashSystem,
  watchToEnd,
  type CrashSystem,
  type FailpointSpec,
  type ServiceName,
} from './crash-harness';
import { killNow, ledgerOf, untilLogged, witnessedKeys } from './agent-support';
import { eventually } from './system';

const AGENTS = fileURLToPath(new URL('./fixtures/code-agent-faults.ts', import.meta.url));
const PLANNER_ENV = { DURA_AGENTS: AGENTS };
const AGENT = { kind: 'agent', name: 'code-fault-payer' } as const;
/** The agent's charges: one, a group of three, and the last one once approved. */
const CHARGES = [100, 201, 202, 203, 300];

const crash = useCrashSystem(['planner', 'tool-gateway'], {
  env: (name): Record<string, string> => (name === 'planner' ? PLANNER_ENV : {}),
});

/** Starts `name` again, without a failpoint (the planner with the agents module). */
function restartClean(sys: CrashSystem, name: ServiceName) {
  return sys.restart(name, undefined, name === 'planner' ? PLANNER_ENV : {});
}

/** Starts `name` with `failpoint` armed, so its hit count starts with the next run. */
function arm(sys: CrashSystem, name: ServiceName, failpoint: FailpointSpec) {
  return sys.restart(name, failpoint, name === 'planner' ? PLANNER_ENV : {});
}

const isSignalWait = (signal: string) => (e: RunEvent) =>
  e.type === 'wait_requested' && e.data.kind === 'signal' && e.data.signal === signal;

/** Answers the run's two waits as each opens: `go`, then the approval `final`. */
async function answerWaits(sys: CrashSystem, runId: string, approved = true): Promise<void> {
  const client = createDuraClient(sys.system);
  await untilLogged(sys, runId, isSignalWait('go'), 'the wait for go', 90_000);
  await client.signal(runId, 'go', { signalId: `${runId}-go`, payload: { from: 'test' } });
  await untilLogged(sys, runId, isSignalWait('final'), 'the approval wait', 90_000);
  await client.signal(runId, 'final', { signalId: `${runId}-final`, payload: { approved } });
}

/**
 * The contract of every kill: the run completes with the agent's output; each call is requested once and
 * observed once; every charge's key reached the witness and was charged exactly once (a pay.checked key
 * asked once: a crashed call is settled by its status look-up); no other key of the run reached it; the
 * gateway's ledger holds each charge once.
 */
async function expectCompletedOnce(sys: CrashSystem, runId: string): Promise<RunEvent[]> {
  const watched = await watchToEnd(sys, runId, 180_000);
  const types = watched.map((e) => e.type);
  expect(types.at(-1), `the run completes; its log: ${types.join(', ')}`).toBe('run_completed');
  const log = await logOf(sys, runId);
  expect(log).toEqual(watched);
  const state = fold(log);
  expect(state.status).toBe('completed');

  const requested = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
  expect(requested.map((c) => c.tool)).toEqual([
    'pay.charge',
    'pay.charge',
    'pay.checked',
    'pay.charge',
    'dura.wait_for_signal',
    'dura.wait_for_signal',
    'pay.charge',
  ]);
  expect(new Set(requested.map((c) => c.callId)).size).toBe(requested.length);
  const charges = requested.filter((c) => c.tool.startsWith('pay.'));
  expect(charges.map((c) => c.args['amount'])).toEqual(CHARGES);
  for (const call of charges) {
    const key = call.idempotencyKey;
    expect(sys.witness.effects(key), `effects of ${key}`).toBe(1);
    if (call.tool === 'pay.checked') expect(sys.witness.requests(key), `requests of ${key}`).toBe(1);
  }
  expect(witnessedKeys(sys, runId).sort()).toEqual(charges.map((c) => c.idempotencyKey).sort());
  // Each charge observed exactly once; the two waits resolved by their signals; every call completed.
  const observed = log.flatMap((e) =>
    e.type === 'tool_call_completed' || e.type === 'tool_call_failed' ? [e.data.callId] : [],
  );
  expect(observed.sort(), 'one observation per charge').toEqual(charges.map((c) => c.callId).sort());
  expect(log.filter((e) => e.type === 'signal_received').map((e) => e.data.name)).toEqual(['go', 'final']);
  expect(state.calls.map((c) => c.status)).toEqual(requested.map(() => 'completed'));
  const ledger = await ledgerOf(sys, runId);
  expect(ledger.map((row) => row.idempotency_key).sort()).toEqual(
    charges.map((c) => c.idempotencyKey).sort(),
  );
  expect(state.output).toMatchObject({ go: { kind: 'signal', payload: { from: 'test' } } });
  expect(state.output).toMatchObject({ final: { amount: 300 } });
  // The group is one decision: one thought holds its three calls.
  const thoughts = log.flatMap((e) => (e.type === 'thought' ? [e.data.decision] : []));
  const group = thoughts.find((d) => d.kind === 'tool_calls' && d.calls.length === 3);
  expect(group?.kind === 'tool_calls' ? group.calls.map((c) => c.args['amount']) : []).toEqual([
    201, 202, 203,
  ]);
  return log;
}

async function submit(sys: CrashSystem, runId: string, input: Record<string, number> = {}): Promise<void> {
  await sys.submit({ runId, agent: AGENT, input });
}

/** Arms `failpoint` in `name`, submits the run and expects `name` killed there. */
async function killedAt(sys: CrashSystem, name: ServiceName, failpoint: FailpointSpec, runId: string) {
  await arm(sys, name, failpoint);
  await submit(sys, runId);
  await expectKilledAt(sys, name, failpoint);
}

/** Starts `name` again, answers the run's waits and expects the contract of every kill. */
async function recoveredAfter(sys: CrashSystem, name: ServiceName, runId: string) {
  await restartClean(sys, name);
  await answerWaits(sys, runId);
  await expectCompletedOnce(sys, runId);
}

describe('a code agent under SIGKILL', () => {
  it('planner killed after the first intent is recorded, before its dispatch', async () => {
    const sys = crash();
    const runId = 'cf-after-intent';
    await killedAt(sys, 'planner', 'planner.after-intent:1', runId);
    const atKill = await logOf(sys, runId);
    expect(atKill.filter((e) => e.type === 'tool_call_requested')).toHaveLength(1);
    expect(witnessedKeys(sys, runId)).toEqual([]);
    await recoveredAfter(sys, 'planner', runId);
  });

  it.each(['gateway.after-effect:1', 'gateway.after-commit:1'] as const)(
    'gateway killed mid-charge at %s: the charge is settled once by its key',
    async (failpoint) => {
      const sys = crash();
      const runId = `cf-${failpoint.replace(/[.:]/g, '-')}`;
      await killedAt(sys, 'tool-gateway', failpoint, runId);
      await recoveredAfter(sys, 'tool-gateway', runId);
    },
  );

  it.each(['gateway.after-effect:2', 'gateway.after-effect:3', 'gateway.after-commit:3'] as const)(
    'gateway killed in the middle of the parallel group at %s',
    async (failpoint) => {
      const sys = crash();
      const runId = `cf-group-${failpoint.replace(/[.:]/g, '-')}`;
      await killedAt(sys, 'tool-gateway', failpoint, runId);
      // The kill fell inside the group: all three intents are recorded, not all three observed.
      const atKill = await logOf(sys, runId);
      expect(atKill.filter((e) => e.type === 'tool_call_requested')).toHaveLength(4);
      expect(atKill.filter((e) => e.type === 'tool_call_completed').length).toBeLessThan(4);
      await recoveredAfter(sys, 'tool-gateway', runId);
    },
  );

  it('planner killed after the parallel group is recorded, before any of it is dispatched', async () => {
    const sys = crash();
    const runId = 'cf-group-after-intent';
    await killedAt(sys, 'planner', 'planner.after-intent:2', runId);
    const atKill = await logOf(sys, runId);
    expect(atKill.filter((e) => e.type === 'tool_call_requested')).toHaveLength(4);
    expect(witnessedKeys(sys, runId)).toHaveLength(1);
    await recoveredAfter(sys, 'planner', runId);
  });

  it('planner killed while the parallel group is half answered', async () => {
    const sys = crash();
    const runId = 'cf-group-half';
    // The group's last charge is held back at the witness: the other two answer first.
    await submit(sys, runId, { slowMs: 2_000 });
    const half = await untilLogged(
      sys,
      runId,
      (e) => e.type === 'tool_call_completed' && e.data.callId !== 'call-1' && e.data.callId !== 'call-4',
      'a first result of the group',
      90_000,
    );
    await killNow(sys, 'planner');
    const completed = half.filter((e) => e.type === 'tool_call_completed').length;
    expect(completed).toBeGreaterThanOrEqual(2);
    expect(half.some((e) => e.type === 'tool_call_completed' && e.data.callId === 'call-4')).toBe(false);
    await recoveredAfter(sys, 'planner', runId);
  });

  it('planner and gateway killed while the run waits on a signal; the signal arrives while both are down', async () => {
    const sys = crash();
    const runId = 'cf-signal-down';
    await submit(sys, runId);
    await untilLogged(sys, runId, isSignalWait('go'), 'the wait for go', 90_000);
    await killNow(sys, 'planner');
    await killNow(sys, 'tool-gateway');
    const client = createDuraClient(sys.system);
    await client.signal(runId, 'go', { signalId: `${runId}-go`, payload: { from: 'test' } });
    // Nothing records it while the planner is down: the run still waits.
    expect(fold(await logOf(sys, runId)).status).toBe('waiting');
    await restartClean(sys, 'tool-gateway');
    await restartClean(sys, 'planner');
    await untilLogged(sys, runId, isSignalWait('final'), 'the approval wait', 90_000);
    // Killed again while it waits on the approval; approved after the restart.
    await killNow(sys, 'planner');
    await restartClean(sys, 'planner');
    await client.signal(runId, 'final', { signalId: `${runId}-final`, payload: { approved: true } });
    await expectCompletedOnce(sys, runId);
  });

  it('planner killed right after it recorded the signal wait (planner.after-wait); signalled after restart', async () => {
    const sys = crash();
    const runId = 'cf-after-wait';
    await killedAt(sys, 'planner', 'planner.after-wait:1', runId);
    const atKill = fold(await logOf(sys, runId));
    expect(atKill.status).toBe('waiting');
    expect(atKill.waiting).toMatchObject({ kind: 'signal', signal: 'go' });
    await recoveredAfter(sys, 'planner', runId);
  });

  it('a rejected approval after a restart ends the run without the last charge', async () => {
    const sys = crash();
    const runId = 'cf-rejected';
    await submit(sys, runId);
    const client = createDuraClient(sys.system);
    await untilLogged(sys, runId, isSignalWait('go'), 'the wait for go', 90_000);
    await client.signal(runId, 'go', { signalId: `${runId}-go` });
    await untilLogged(sys, runId, isSignalWait('final'), 'the approval wait', 90_000);
    await killNow(sys, 'planner');
    await client.signal(runId, 'final', {
      signalId: `${runId}-final`,
      payload: { approved: false, reason: 'over budget' },
    });
    await restartClean(sys, 'planner');
    const log = await watchToEnd(sys, runId, 180_000);
    expect(log.at(-1)?.type).toBe('run_completed');
    expect(fold(log).output).toMatchObject({ final: null, reason: 'over budget' });
    const charges = log.flatMap((e) =>
      e.type === 'tool_call_requested' && e.data.tool.startsWith('pay.') ? [e.data] : [],
    );
    expect(charges.map((c) => c.args['amount'])).toEqual([100, 201, 202, 203]);
    for (const call of charges) expect(sys.witness.effects(call.idempotencyKey)).toBe(1);
    expect(witnessedKeys(sys, runId)).toHaveLength(4);
    await eventually(
      async () => ((await ledgerOf(sys, runId)).length === 4 ? true : undefined),
      'the ledger to hold the four charges',
    );
  });

  it.each(['planner.after-wait:1', 'planner.before-parent-report:1'] as const)(
    'parallel child runs: planner killed at %s; both children and the parent complete, one charge per key',
    async (failpoint) => {
      const sys = crash();
      const runId = `cf-children-${failpoint.replace(/[.:]/g, '-')}`;
      const children = [1, 2].map((step) => childRunIdFor(runId, step));
      await arm(sys, 'planner', failpoint);
      await sys.submit({ runId, agent: { kind: 'agent', name: 'code-fault-parent' }, input: null });
      await expectKilledAt(sys, 'planner', failpoint);
      const atKill = await logOf(sys, runId);
      // Both children were requested in one go, before the kill.
      expect(atKill.flatMap((e) => (e.type === 'child_run_requested' ? [e.data.childRunId] : []))).toEqual(
        children,
      );
      await restartClean(sys, 'planner');

      const log = await watchToEnd(sys, runId, 180_000);
      expect(log.at(-1)?.type, log.map((e) => e.type).join(', ')).toBe('run_completed');
      expect(log.filter((e) => e.type === 'child_run_completed')).toHaveLength(2);
      const keys: string[] = [];
      for (const child of children) {
        const childLog = await watchToEnd(sys, child, 60_000);
        expect(childLog.at(-1)?.type).toBe('run_completed');
        keys.push(...witnessedKeys(sys, child));
      }
      expect(keys).toHaveLength(2);
      expect(witnessedKeys(sys, runId)).toHaveLength(1);
      keys.push(...witnessedKeys(sys, runId));
      for (const key of keys) expect(sys.witness.effects(key), `effects of ${key}`).toBe(1);
      expect(fold(log).output).toMatchObject({
        a: { amount: 11 },
        b: { amount: 12 },
        total: { amount: 23 },
      });
    },
  );
});
