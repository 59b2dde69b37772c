// Fork, end to end: planner, tool-gateway and projector as separate processes, every charge going through
// the payment witness (an external HTTP payments API that charges once per Idempotency-Key).
import { describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import type { RunEvent } from '@dura/contracts';
import { fold, forkEventId, idempotencyKey } from '@dura/core';
import {
  keyOf,
  logOf,
  useCrashSystem,
  watchToEnd,
  type CrashSystem,
  type PlanRequest,
} from './crash-harness';
import { eventually, getJson } from './system';

const crash = useCrashSystem(['tool-gateway', 'projector', 'planner']);

/** `steps` charges through pay.charge, of 100, 200, … */
function charges(runId: string, steps: number): PlanRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: Array.from({ length: steps }, (_, i) => ({
        tool: 'pay.charge',
        args: { amount: (i + 1) * 100 },
      })),
    },
  };
}

async function completed(sys: CrashSystem, request: PlanRequest): Promise<RunEvent[]> {
  await sys.submit(request);
  const log = await watchToEnd(sys, request.runId);
  expect(log.at(-1)?.type, `${request.runId} completes`).toBe('run_completed');
  return log;
}

/** The projector's state of the run once it has caught up with `log`, and its page of events. */
async function projection(sys: CrashSystem, runId: string, log: RunEvent[]) {
  const lastSeq = log.at(-1)!.seq;
  const state = await eventually(
    async () => {
      const { status, body } = await getJson(`${sys.system.apiUrl}/runs/${runId}`);
      return status === 200 && (body as { lastSeq: number }).lastSeq === lastSeq ? body : undefined;
    },
    `the projection of ${runId} to reach seq ${lastSeq}`,
    30_000,
  );
  const { body } = await getJson(`${sys.system.apiUrl}/runs/${runId}/events?limit=1000`);
  return { state, events: (body as { events: RunEvent[] }).events };
}

const keysOf = (log: RunEvent[]): string[] =>
  log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data.idempotencyKey] : []));

describe('forking a completed run', () => {
  it('at step 5 of 10 re-runs steps 6-10 under new keys, keeps 1-5, and leaves the source untouched', async () => {
    const sys = crash();
    const source = charges('fork-e2e-src', 10);
    const sourceLog = await completed(sys, source);
    const sourceProjection = await projection(sys, source.runId, sourceLog);
    const atSeq = sourceLog.find((e) => e.type === 'tool_call_completed' && e.data.callId === 'call-5')!.seq;

    const client = createDuraClient(sys.system);
    const { runId } = await client.forkRun({ sourceRunId: source.runId, atSeq, runId: 'fork-e2e-new' });
    const forkLog = await watchToEnd(sys, runId);
    expect(
      forkLog.at(-1)?.type,
      `the fork completes; its log: ${forkLog.map((e) => e.type).join(', ')}`,
    ).toBe('run_completed');

    // The fork starts with the source's prefix, then decided steps 6-10 itself.
    const prefix = sourceLog.filter((e) => e.seq <= atSeq);
    expect(forkLog.slice(0, prefix.length).map((e) => [e.type, e.meta.id])).toEqual(
      prefix.map((e, i) => [e.type, forkEventId(runId, i)]),
    );
    expect(forkLog[0]).toMatchObject({ data: { forkOf: { runId: source.runId, atSeq } } });
    const forkKeys = keysOf(forkLog);
    const newKeys = Array.from({ length: 5 }, (_, i) =>
      idempotencyKey({ runId, step: i + 6, tool: 'pay.charge', args: { amount: (i + 6) * 100 } }),
    );
    expect(forkKeys).toEqual([...keysOf(sourceLog).slice(0, 5), ...newKeys]);

    // The witness charged 10 + 5 times: each source key once, each new key once, nothing else.
    const sourceKeys = Array.from({ length: 10 }, (_, i) => keyOf(source, i + 1));
    for (const key of [...sourceKeys, ...newKeys]) expect(sys.witness.effects(key), key).toBe(1);
    const charged = sys.witness
      .keys()
      .filter((k) => k.startsWith(`${source.runId}:`) || k.startsWith(`${runId}:`));
    expect(charged.sort()).toEqual([...sourceKeys, ...newKeys].sort());
    expect(charged.reduce((sum, key) => sum + sys.witness.effects(key), 0)).toBe(15);

    // No recorded decision was asked again: the fork's model was asked for decisions 5 to 10 only.
    const asked = (await sys.modelCalls(runId)).map((call) => call.decisions);
    expect(asked).toEqual([5, 6, 7, 8, 9, 10]);

    // The source's log and projection are exactly as they were; the fork's projection is its fold.
    expect(await logOf(sys, source.runId)).toEqual(sourceLog);
    expect(await projection(sys, source.runId, sourceLog)).toEqual(sourceProjection);
    const forkProjection = await projection(sys, runId, forkLog);
    expect(forkProjection.state).toEqual(JSON.parse(JSON.stringify(fold(forkLog))));
    expect(forkProjection.events).toEqual(JSON.parse(JSON.stringify(forkLog)));
  });

  it('between an intent and its observation, copies the recorded outcome: that charge is not requested again', async () => {
    const sys = crash();
    const source = charges('fork-e2e-mid', 4);
    const sourceLog = await completed(sys, source);
    const intent = sourceLog.find((e) => e.type === 'tool_call_requested' && e.data.step === 3)!;
    const key3 = keyOf(source, 3);
    expect(sys.witness.requests(key3)).toBe(1);

    const client = createDuraClient(sys.system);
    const { runId } = await client.forkRun({ sourceRunId: source.runId, atSeq: intent.seq });
    const forkLog = await watchToEnd(sys, runId);
    expect(forkLog.at(-1)?.type).toBe('run_completed');

    const observation = sourceLog.find(
      (e) => e.type === 'tool_call_completed' && e.data.callId === 'call-3',
    )!;
    const copied = forkLog.find((e) => e.type === 'tool_call_completed' && e.data.callId === 'call-3')!;
    expect(copied.data).toEqual(observation.data);
    expect(copied.meta.id).toMatch(new RegExp(`^${runId}@fork\\.`));
    expect(sys.witness.requests(key3), 'the copied call reached the witness only once, from the source').toBe(
      1,
    );
    const step4 = idempotencyKey({ runId, step: 4, tool: 'pay.charge', args: { amount: 400 } });
    expect(keysOf(forkLog)).toEqual([...keysOf(sourceLog).slice(0, 3), step4]);
    expect(sys.witness.effects(step4)).toBe(1);
  });
});
