// Fork, end to end: planner, tool-gateway and projector as separate processes, every charge going through
// the payment witness (an external HTTP payments API that charges once per Idempotency-Key); forks with
// edited state asked for through @dura/client and through the `dura` CLI.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import type { RunEvent } from '@dura/contracts';
import { fold, forkEventId, idempotencyKey, jsonHash } from '@dura/core';
import {
  keyOf,
  logOf,
  useCrashSystem,
  watchToEnd,
  type CrashSystem,
  type PlanRequest,
} from './crash-harness';
import { dura, eventually, getJson } from './system';

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

/** Charge 100, then charge again what the first charge's answer says it charged. */
function chargeTwice(runId: string): PlanRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: [
        { tool: 'pay.charge', args: { amount: 100 } },
        { tool: 'pay.charge', args: { amount: '$steps.1.amount' } },
      ],
    },
  };
}

const resultOf = (log: RunEvent[], callId: string) =>
  log.find((e) => e.type === 'tool_call_completed' && e.data.callId === callId)!;

const step2Key = (runId: string, amount: number) =>
  idempotencyKey({ runId, step: 2, tool: 'pay.charge', args: { amount } });

describe('a fork with an edited tool result', () => {
  it('continues from the edited value, and the edited call is not charged again', async () => {
    const sys = crash();
    const source = chargeTwice('edit-e2e-src');
    const sourceLog = await completed(sys, source);
    const observed = resultOf(sourceLog, 'call-1');
    const original = observed.type === 'tool_call_completed' ? observed.data.result : null;
    const key1 = keyOf(source, 1);
    expect(sys.witness.requests(key1)).toBe(1);

    const client = createDuraClient(sys.system);
    const { runId } = await client.forkRun({
      sourceRunId: source.runId,
      atSeq: observed.seq,
      runId: 'edit-e2e-new',
      edit: { toolResult: { callId: 'call-1', output: { chargeId: 'ch_edited', amount: 700 } } },
      editedBy: 'alice',
    });
    const forkLog = await watchToEnd(sys, runId);
    expect(forkLog.at(-1)).toMatchObject({ type: 'run_completed', data: { output: { amount: 700 } } });

    // The witness saw call 1 once (from the source) and the fork's step 2 charged the edited amount, once.
    expect(sys.witness.requests(key1), 'the edited call never reached the witness again').toBe(1);
    expect(sys.witness.effects(key1)).toBe(1);
    expect(sys.witness.effects(step2Key(runId, 700))).toBe(1);
    const forkCharges = sys.witness.keys().filter((key) => key.startsWith(`${runId}:`));
    expect(forkCharges).toEqual([step2Key(runId, 700)]);

    const copy = resultOf(forkLog, 'call-1');
    expect(copy.data).toMatchObject({
      idempotencyKey: key1,
      result: { chargeId: 'ch_edited', amount: 700 },
      edited: {
        by: 'alice',
        sourceRunId: source.runId,
        sourceSeq: observed.seq,
        originalSha256: jsonHash(original),
      },
    });
    expect(await logOf(sys, source.runId)).toEqual(sourceLog);
  });
});

describe('dura fork with edits', () => {
  it('--tool-result from a file and --input follow the fork to its end, and a bad edit exits 5 sending nothing', async () => {
    const sys = crash();
    const source = chargeTwice('edit-cli-src');
    const sourceLog = await completed(sys, source);
    const observed = resultOf(sourceLog, 'call-1');
    const dir = await mkdtemp(join(tmpdir(), 'dura-fork-edit-'));
    try {
      const file = join(dir, 'result.json');
      await writeFile(file, JSON.stringify({ chargeId: 'ch_cli', amount: 300 }));
      const forked = await dura(sys, [
        'fork',
        source.runId,
        '--at',
        String(observed.seq),
        '--tool-result',
        `call-1=@${file}`,
        '--by',
        'cli-tester',
        '--run-id',
        'edit-cli-new',
        '--follow',
      ]);
      expect(forked.output).toContain(
        `forked ${source.runId} at seq ${observed.seq} into edit-cli-new with edited result of call-1 (by cli-tester)`,
      );
      expect(forked.output).toMatch(/^run edit-cli-new completed$/m);
      expect(forked.code).toBe(0);
      expect(sys.witness.effects(step2Key('edit-cli-new', 300))).toBe(1);
      expect(sys.witness.requests(keyOf(source, 1))).toBe(1);

      const withInput = await dura(sys, [
        'fork',
        source.runId,
        '--at',
        String(sourceLog[0]!.seq),
        '--input',
        '{"note": "edited"}',
        '--by',
        'cli-tester',
        '--run-id',
        'edit-cli-input',
        '--follow',
      ]);
      expect(withInput.code).toBe(0);
      expect((await logOf(sys, 'edit-cli-input'))[0]).toMatchObject({
        data: { request: { input: { note: 'edited' } }, forkOf: { edited: { by: 'cli-tester', input: {} } } },
      });

      const late = await dura(sys, [
        'fork',
        source.runId,
        '--at',
        String(resultOf(sourceLog, 'call-2').seq),
        '--tool-result',
        'call-1={"amount": 1}',
        '--run-id',
        'edit-cli-late',
      ]);
      expect(late.output).toContain('from the recorded result of call call-1');
      expect(late.output).toContain('[fork_edit_invalid]');
      expect(late.code).toBe(5);
      expect(await logOf(sys, 'edit-cli-late')).toEqual([]);
      const malformed = await dura(sys, [
        'fork',
        source.runId,
        '--at',
        '1',
        '--tool-result',
        '{"amount": 1}',
      ]);
      expect(malformed.output).toContain('--tool-result takes CALL_ID=JSON or CALL_ID=@file');
      expect(malformed.code).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
