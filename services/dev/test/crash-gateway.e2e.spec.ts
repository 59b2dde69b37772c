// DESIGN crash points 3, 4 and 5: the tool-gateway process (which also runs the outbox relay) is SIGKILLed
// at a failpoint in the middle of a 5-step run, restarted without it, and no charge may happen twice.
// Recovery within seconds relies on GATEWAY_ACK_WAIT_MS and GATEWAY_LEASE_MARGIN_MS (see crash-harness.ts).
import { describe, expect, it } from 'vitest';
import {
  expectRecovered,
  keyOf,
  logOf,
  useCrashSystem,
  watchToEnd,
  type PlanRequest,
  type CrashSystem,
} from './crash-harness';
import { effectRow, killedAt, killerOf } from './crash-points-support';
import { eventually } from './system';

const crash = useCrashSystem(['planner', 'projector']);

const killAt = killerOf('tool-gateway');

async function unsentOutbox(sys: CrashSystem, runId: string): Promise<string[]> {
  const rows = await sys.system.sql<{ msg_id: string }[]>`
    select msg_id from outbox where run_id = ${runId} and sent_at is null order by id`;
  return rows.map((row) => row.msg_id);
}

async function observed(sys: CrashSystem, runId: string, key: string): Promise<number> {
  const log = await logOf(sys, runId);
  return log.filter((e) => e.type === 'tool_call_completed' && e.data.idempotencyKey === key).length;
}

describe('a tool gateway killed with SIGKILL', () => {
  it('after the effect ran, before its transaction commits: settles a tool with status() by asking, not re-running', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-gateway-after-effect', 'gateway.after-effect:3');
    const key = keyOf(request, 3); // pay.checked

    // Charged at the witness, but the ledger only knows the call started, and the log knows nothing.
    expect(sys.witness.effects(key)).toBe(1);
    expect(await effectRow(sys, key)).toEqual({ status: 'started', attempts: 1 });
    expect(await observed(sys, request.runId, key)).toBe(0);

    await sys.restart('tool-gateway');
    await expectRecovered(sys, request.runId, { steps: 5 });
    expect(sys.witness.lookups(key), 'reconciled through status()').toBeGreaterThanOrEqual(1);
    expect(sys.witness.requests(key)).toBe(1);
  });

  it('after the effect ran, before its transaction commits: re-runs an idempotent tool without status() with the same key', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-gateway-after-effect-rerun', 'gateway.after-effect:2');
    const key = keyOf(request, 2); // pay.charge
    expect(sys.witness.effects(key)).toBe(1);

    await sys.restart('tool-gateway');
    await expectRecovered(sys, request.runId, { steps: 5 });
    // Asked twice, charged once: the key reached the payment API both times, and it did the deduplication.
    expect(sys.witness.requests(key)).toBe(2);
    expect(await effectRow(sys, key)).toEqual({ status: 'succeeded', attempts: 2 });
  });

  it('after a read-only call ran unclaimed on its first delivery, before its result commits: the redelivery runs it under a claim, one result logged', async () => {
    const sys = crash();
    const request: PlanRequest = {
      runId: 'crash-gateway-read-only',
      agent: { kind: 'scripted', steps: [1, 2, 3].map((n) => ({ tool: 'echo', args: { n } })) },
    };
    const key = keyOf(request, 2);
    await killedAt(sys, 'tool-gateway', 'gateway.after-effect:2', request);
    // Nothing was claimed: the ledger has no row of the call and the log no result.
    expect(await effectRow(sys, key)).toBeUndefined();
    expect(await observed(sys, request.runId, key)).toBe(0);

    await sys.restart('tool-gateway');
    const watched = await watchToEnd(sys, request.runId);
    expect(watched.at(-1)?.type).toBe('run_completed');
    const log = await logOf(sys, request.runId);
    const requested = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data.callId] : []));
    const completed = log.flatMap((e) => (e.type === 'tool_call_completed' ? [e.data.callId] : []));
    expect(requested).toHaveLength(3);
    expect(completed, 'one observation per call').toEqual(requested);
    expect(await effectRow(sys, key)).toEqual({ status: 'succeeded', attempts: 1 });
    expect(await observed(sys, request.runId, key)).toBe(1);
  });

  it('after commit, before the relay publishes: the restarted relay publishes the committed observation', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-gateway-after-commit', 'gateway.after-commit:3');
    const key = keyOf(request, 3);

    expect(await effectRow(sys, key)).toEqual({ status: 'succeeded', attempts: 1 });
    expect(await unsentOutbox(sys, request.runId)).toEqual([`${key}:result`]);
    expect(await observed(sys, request.runId, key)).toBe(0);

    await sys.restart('tool-gateway');
    await expectRecovered(sys, request.runId, { steps: 5 });
    expect(sys.witness.requests(key)).toBe(1);
  });

  it('in the relay, after publish, before the outbox row is marked sent: the re-publish is a duplicate', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-relay-after-publish', 'relay.after-publish:3');

    // The killed pass published its rows but did not mark them sent. Which rows those are depends on timing
    // (a pass may also carry re-queued observations of earlier runs), so read them instead of assuming a step.
    const unsent = await sys.system.sql<{ run_id: string; msg_id: string }[]>`
      select run_id, msg_id from outbox where sent_at is null order by id`;
    expect(unsent.length).toBeGreaterThan(0);
    for (const row of unsent) {
      const key = row.msg_id.replace(/:result$/, '');
      expect(await observed(sys, row.run_id, key), `${row.msg_id} is already in the log`).toBe(1);
    }

    await sys.restart('tool-gateway');
    await expectRecovered(sys, request.runId, { steps: 5 });
    await eventually(
      async () => ((await unsentOutbox(sys, request.runId)).length === 0 ? true : undefined),
      'the outbox to be drained',
    );
    for (const row of unsent) {
      const key = row.msg_id.replace(/:result$/, '');
      expect(await observed(sys, row.run_id, key), `${row.msg_id} is still in the log once`).toBe(1);
      expect(sys.witness.requests(key)).toBe(1);
    }
    const key = keyOf(request, 3);
    expect(sys.witness.requests(key)).toBe(1);
  });
});
