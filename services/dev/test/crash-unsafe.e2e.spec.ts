// An unsafe tool (pay.unsafe) whose gateway is SIGKILLed by the test while the call is in flight: the charge
// already happened at the payment API, but nobody recorded it. It must never be run again blindly.
import { describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import type { JsonValue, RunEvent } from '@dura/contracts';
import {
  keyOf,
  logOf,
  useCrashSystem,
  watchToEnd,
  type CrashSystem,
  type PlanRequest,
} from './crash-harness';
import { eventually, getJson } from './system';

const crash = useCrashSystem(['planner', 'tool-gateway', 'projector']);

const SETTLE_WINDOW_MS = 30_000;

function unsafePlan(runId: string): PlanRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: [
        { tool: 'pay.charge', args: { amount: 100 } },
        // The witness charges on arrival and answers 3 s later: the window in which the test kills the gateway.
        { tool: 'pay.unsafe', args: { amount: 250, delayMs: 3_000 } },
        { tool: 'pay.charge', args: { amount: 300 } },
      ],
    },
  };
}

const AT_REST: ReadonlySet<RunEvent['type']> = new Set([
  'wait_requested',
  'run_completed',
  'run_failed',
  'run_cancelled',
]);

/** Polls the log until the run comes to rest (waits or ends) or the window closes, and returns it. */
async function restingLog(sys: CrashSystem, runId: string): Promise<RunEvent[]> {
  const deadline = Date.now() + SETTLE_WINDOW_MS;
  for (;;) {
    const log = await logOf(sys, runId);
    if (log.some((e) => AT_REST.has(e.type)) || Date.now() > deadline) return log;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('an unsafe tool whose gateway is killed mid-call', () => {
  it('is not run again: the run waits for an operator, and `confirm` resumes it without a second request', async () => {
    const sys = crash();
    const request = unsafePlan('crash-unsafe-mid-call');
    const key = keyOf(request, 2);
    await sys.submit(request);
    await eventually(
      () => Promise.resolve(sys.witness.requests(key) === 1 ? true : undefined),
      'the unsafe call to reach the witness',
    );

    const gateway = sys.proc('tool-gateway');
    await gateway.kill('SIGKILL');
    expect((await gateway.exited).signal).toBe('SIGKILL');
    const [row] = await sys.system.sql<{ status: string }[]>`
      select status from effects where idempotency_key = ${key}`;
    expect(row?.status).toBe('started');

    await sys.restart('tool-gateway');
    const log = await restingLog(sys, request.runId);
    const types = log.map((e) => e.type);

    expect(sys.witness.requests(key), 'the unsafe call reached the payment API once').toBe(1);
    expect(sys.witness.effects(key)).toBe(1);
    expect(types, 'the run did not complete as if the charge were known').not.toContain('run_completed');
    expect(sys.witness.requests(keyOf(request, 3)), 'no step after the unknown charge ran').toBe(0);
    const failed = log.find((e) => e.type === 'tool_call_failed' && e.data.idempotencyKey === key);
    if (failed?.type === 'tool_call_failed') expect(failed.data.error.code).toBe('outcome_unknown');
    expect(
      log.some((e) => e.type === 'tool_call_completed' && e.data.idempotencyKey === key),
      'the gateway did not invent a result for the unknown charge',
    ).toBe(false);

    // The run waits, visibly, for an operator.
    const wait = log.find((e) => e.type === 'wait_requested');
    expect(wait?.type === 'wait_requested' && wait.data).toMatchObject({
      kind: 'operator',
      callId: 'call-2',
    });
    // The read model follows the log: read it once it has folded the log as far as the run came to rest.
    const restSeq = log.at(-1)?.seq ?? 0;
    const projected = await eventually(
      async () => {
        const { status, body } = await getJson(`${sys.system.apiUrl}/runs/${request.runId}`);
        return status === 200 && (body as { lastSeq: number }).lastSeq >= restSeq ? body : undefined;
      },
      `the projection of ${request.runId} to reach seq ${restSeq}`,
      30_000,
    );
    expect(projected).toMatchObject({ status: 'waiting', waiting: { kind: 'operator', callId: 'call-2' } });

    // The operator looks the charge up at the payment API and confirms it, with its result.
    const lookedUp = await fetch(`${sys.witness.url}/charges/${encodeURIComponent(key)}`);
    expect(lookedUp.status).toBe(200);
    const charge = (await lookedUp.json()) as JsonValue;
    await createDuraClient(sys.system).signal(request.runId, 'confirm', {
      payload: { callId: 'call-2', result: charge },
    });

    const events = await watchToEnd(sys, request.runId);
    expect(events.at(-1)?.type).toBe('run_completed');
    const confirmed = events.find((e) => e.type === 'tool_call_completed' && e.data.idempotencyKey === key);
    expect(confirmed?.type === 'tool_call_completed' && confirmed.data.result).toEqual(charge);
    expect(sys.witness.requests(key), 'still one request for the unsafe call after the resume').toBe(1);
    expect(sys.witness.effects(keyOf(request, 3)), 'the step after it ran once').toBe(1);
  });
});
