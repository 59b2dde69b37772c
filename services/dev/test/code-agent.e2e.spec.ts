// Code agents served by the planner, on real NATS, Postgres and processes: the planner loads them from the
// module DURA_AGENTS names and decides each run by replaying its code against the log (`@dura/code-agents`).
// A fan-out of two tools in one `Promise.all` is one decision with two intents; each charge reaches the
// payment witness once. Code changed under a running run (another tool at a recorded position) stops the run
// in an operator wait naming both calls, and nothing runs past it until an operator serves the code the run
// started with and signals retry: `dura get` says so, and `dura replay` with that code finds no divergence.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import { fold, RETRY_SIGNAL } from '@dura/core';
import { logOf, useCrashSystem, watchToEnd } from './crash-harness';
import { count, killNow, ledgerOf, plannerCaughtUp, untilLogged, witnessedKeys } from './agent-support';
import { dura } from './system';

const AGENTS = fileURLToPath(new URL('./fixtures/code-agents.ts', import.meta.url));
const CHANGED = fileURLToPath(new URL('./fixtures/code-agents-changed.ts', import.meta.url));

const crash = useCrashSystem(['planner', 'tool-gateway'], {
  env: (name): Record<string, string> => (name === 'planner' ? { DURA_AGENTS: AGENTS } : {}),
});

describe('a code agent served by the planner', () => {
  it('fans out two tools in one decision, then a final step, and completes with each tool called once', async () => {
    const sys = crash();
    const runId = 'code-fan-out-1';
    await sys.submit({ runId, agent: { kind: 'agent', name: 'code-fan-out' }, input: null });
    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_completed');
    const started = log.find((e) => e.type === 'run_started');
    expect(started?.data).toMatchObject({
      pinned: { agent: 'code-fan-out', version: '1', provider: 'code' },
    });
    // The first thought holds both calls of the fan-out; the second the final charge; the third completes.
    const thoughts = log.flatMap((e) => (e.type === 'thought' ? [e.data] : []));
    expect(thoughts.map((t) => t.decision.kind)).toEqual(['tool_calls', 'tool_calls', 'complete']);
    const first = thoughts[0]!.decision;
    expect(first.kind === 'tool_calls' ? first.calls.map((c) => c.tool) : []).toEqual([
      'pay.charge',
      'pay.checked',
    ]);
    expect(count(log, 'tool_call_requested')).toBe(3);
    expect(count(log, 'tool_call_completed')).toBe(3);
    expect(witnessedKeys(sys, runId)).toHaveLength(3);
    expect(new Set(sys.witness.keys().filter((k) => k.startsWith(`${runId}:`))).size).toBe(3);
    const ledger = await ledgerOf(sys, runId);
    expect(ledger.map((row) => row.tool)).toEqual(['pay.charge', 'pay.checked', 'pay.charge']);
    expect(fold(log).output).toMatchObject({ final: { amount: 300 } });
  });

  it('survives a SIGKILL of the planner mid-run: completes, one charge per key', async () => {
    const sys = crash();
    const runId = 'code-fan-out-killed';
    await sys.restart('planner', 'planner.after-intent:1', { DURA_AGENTS: AGENTS });
    await sys.submit({ runId, agent: { kind: 'agent', name: 'code-fan-out' }, input: null });
    const exit = await sys.exitOf('planner');
    expect(exit.code).not.toBe(0);
    await sys.restart('planner', undefined, { DURA_AGENTS: AGENTS });
    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_completed');
    expect(count(log, 'tool_call_requested')).toBe(3);
    const keys = witnessedKeys(sys, runId);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(3);
  });

  it('stops in an operator wait naming both calls when its code changes under the run; nothing runs until retry', async () => {
    const sys = crash();
    const runId = 'code-stepper-changed';
    await sys.submit({ runId, agent: { kind: 'agent', name: 'code-stepper' }, input: null });
    await untilLogged(
      sys,
      runId,
      (e) => e.type === 'wait_requested' && e.data.kind === 'signal',
      'the signal wait',
    );
    expect(witnessedKeys(sys, runId)).toHaveLength(1);

    // The same name and version, other code: at the recorded position it asks pay.checked.
    await killNow(sys, 'planner');
    await sys.restart('planner', undefined, { DURA_AGENTS: CHANGED });
    await createDuraClient(sys.system).signal(runId, 'go', { signalId: 'go-1' });

    const log = await untilLogged(
      sys,
      runId,
      (e) => e.type === 'wait_requested' && e.data.kind === 'operator',
      'the operator wait',
    );
    const state = fold(log);
    expect(state.status).toBe('waiting');
    const reason = state.waiting?.reason ?? '';
    expect(reason).toMatch(/non-determinism/);
    expect(reason).toContain('pay.charge');
    expect(reason).toContain('pay.checked');
    // Nothing ran past it: no intent for the new tool, one charge only, and the run stays waiting.
    await plannerCaughtUp(sys);
    const after = await logOf(sys, runId);
    const intents = after.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data.tool] : []));
    expect(intents).toEqual(['pay.charge', 'dura.wait_for_signal']);
    expect(witnessedKeys(sys, runId)).toHaveLength(1);
    expect((await ledgerOf(sys, runId)).map((row) => row.tool)).toEqual(['pay.charge']);
    expect(after.at(-1)?.type).toBe('wait_requested');
    // What `dura get` advises is what lifts this stop: retry (no call is in doubt, so confirm/skip do nothing).
    const advice = await dura(sys, ['get', runId]);
    expect(advice.output).toContain(`dura signal ${runId} retry`);
    expect(advice.output).not.toMatch(/confirm|skip/);

    // The operator serves the code the run started with again and signals retry: the run goes on from
    // the recorded position, each charge once.
    await killNow(sys, 'planner');
    await sys.restart('planner', undefined, { DURA_AGENTS: AGENTS });
    await createDuraClient(sys.system).signal(runId, RETRY_SIGNAL, { signalId: 'retry-1' });
    const done = await watchToEnd(sys, runId);
    expect(done.at(-1)?.type).toBe('run_completed');
    expect(fold(done).output).toBe('done');
    expect((await ledgerOf(sys, runId)).map((row) => row.tool)).toEqual(['pay.charge', 'pay.charge']);
    const keys = witnessedKeys(sys, runId);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
    // Replayed against the code it finished with, the operator-resolved stop is an input, not a divergence.
    const replayed = await dura(sys, ['replay', runId, '--agents', AGENTS]);
    expect(replayed.output).toContain(`no divergence (${done.length} events checked)`);
    expect(replayed.code).toBe(0);
  });
});
